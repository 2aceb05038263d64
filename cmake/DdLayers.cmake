# The layering rule, enforced by the compiler. Every #include of a project header names its
# path from the top of the tree ("store/delta/dl.h"), and there is no global include
# directory: each library compiles against one *include root* of its layer, a directory in
# the build tree holding symbolic links to just the parts of the source tree that layer may
# see. A header outside the root is not there, so including it fails with
# "fatal error: store/catalog/cat_store.h: No such file or directory".
#
# dd_include_root(NAME ENTRY...)  builds ${CMAKE_BINARY_DIR}/inc/NAME at configure time:
#   each ENTRY (a directory or a file, relative to the source tree) appears at the same
#   relative path, linked to the source. An entry may be missing from the tree (a module
#   still to land): its link dangles until it exists. No entry may lie under another.
# dd_layer(NAME TARGET...)        compiles TARGETs against root NAME (PRIVATE: a root never
#   reaches a library's dependents; each of them has its own).
#
# Generated protobuf headers ("deltad/sharing/v1/sharing.pb-c.h") come from dd_generated's
# own include directory, which every library linking it gets; "generated/api.h" is an entry.
# cmd/ and tests/ see the whole tree (include_directories in their CMakeLists.txt).

function(dd_include_root name)
  set(root ${CMAKE_BINARY_DIR}/inc/${name})
  file(REMOVE_RECURSE ${root})  # removes the links, never what they point at
  foreach(entry ${ARGN})
    foreach(other ${ARGN})
      string(FIND "${entry}" "${other}/" at)
      if(at EQUAL 0)
        message(FATAL_ERROR "include root ${name}: ${entry} lies under ${other}")
      endif()
    endforeach()
    get_filename_component(parent ${root}/${entry} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${entry} ${root}/${entry} SYMBOLIC)
  endforeach()
endfunction()

function(dd_layer name)
  if(NOT IS_DIRECTORY ${CMAKE_BINARY_DIR}/inc/${name})
    message(FATAL_ERROR "dd_layer: no include root ${name} (dd_include_root first)")
  endif()
  foreach(target ${ARGN})
    target_include_directories(${target} PRIVATE ${CMAKE_BINARY_DIR}/inc/${name})
  endforeach()
endfunction()

# dd_layer_probe(NAME ROOT HEADER SEES|REFUSES) adds the ctest layers.NAME: a one-line file
# including HEADER, compiled (-fsyntax-only) against include root ROOT as a library of that
# layer is. SEES passes when it compiles; REFUSES passes only when the compiler stops with
# "HEADER: No such file or directory".
function(dd_layer_probe name root header mode)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/layers_${name}.c)
  file(WRITE ${probe} "#include \"${header}\"\n")
  add_test(NAME layers.${name}
           COMMAND ${CMAKE_C_COMPILER} -std=c11 -D_GNU_SOURCE -fsyntax-only
                   -I${CMAKE_BINARY_DIR}/inc/${root} -I${CMAKE_SOURCE_DIR}/generated ${probe})
  if(mode STREQUAL "REFUSES")
    set_tests_properties(layers.${name} PROPERTIES
                         PASS_REGULAR_EXPRESSION "${header}: No such file or directory")
  elseif(NOT mode STREQUAL "SEES")
    message(FATAL_ERROR "dd_layer_probe ${name}: mode is SEES or REFUSES, not ${mode}")
  endif()
endfunction()
