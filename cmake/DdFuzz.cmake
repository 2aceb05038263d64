# dd_add_fuzzer(NAME SOURCE LIBS CORPUS_DIR)
# Every fuzz target is one file defining LLVMFuzzerTestOneInput. Two ways to build it:
#  - default (gcc or clang): linked with tests/fuzz/replay_main.c, a driver that feeds
#    every file of CORPUS_DIR (and its subfolders) once; ctest runs that replay as
#    fuzz.<NAME>.replay, so the corpus is a regression suite in every test run.
#  - DD_FUZZ=ON (clang): linked with -fsanitize=fuzzer; ctest runs fuzz.<NAME> for
#    DD_FUZZ_SECONDS CPU seconds starting from a copy of CORPUS_DIR (tests/fuzz/run_fuzzer.sh;
#    tests/fuzz/run_long.sh runs them all for 10 minutes each).
set(DD_FUZZ_SECONDS 20 CACHE STRING "seconds each libFuzzer target runs under ctest")
function(dd_add_fuzzer name source libs corpus)
  if(DD_FUZZ)
    add_executable(fuzz_${name} ${source})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${name} ${libs})
    add_test(NAME fuzz.${name}
             COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run_fuzzer.sh
                     $<TARGET_FILE:fuzz_${name}> ${corpus} ${DD_FUZZ_SECONDS})
    # SECONDS are CPU seconds; a run that shares the machine takes longer on the clock.
    math(EXPR limit "${DD_FUZZ_SECONDS} * 6 + 300")
    set_tests_properties(fuzz.${name} PROPERTIES TIMEOUT ${limit})
  else()
    add_executable(fuzz_${name}_replay ${source} ${CMAKE_SOURCE_DIR}/tests/fuzz/replay_main.c)
    target_link_libraries(fuzz_${name}_replay ${libs})
    add_test(NAME fuzz.${name}.replay COMMAND fuzz_${name}_replay ${corpus})
  endif()
endfunction()
