# no_relative_include.cmake (cmake -P, -DSRC=<source tree>): fails when a library file of
# common/, server/ or store/ includes a path that climbs out of its directory ("../"), the
# one way around the include roots of cmake/DdLayers.cmake.
file(GLOB_RECURSE files ${SRC}/common/*.[ch] ${SRC}/server/*.[ch] ${SRC}/store/*.[ch])
set(found "")
foreach(f ${files})
  file(STRINGS ${f} hits REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*\\.\\./")
  foreach(h ${hits})
    string(APPEND found "${f}: ${h}\n")
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "includes that climb out of their directory:\n${found}")
endif()
