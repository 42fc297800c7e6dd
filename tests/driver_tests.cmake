# Tests register themselves: a driver that runs one named test of its own
# (DRIVER.py ARGS... NAME) says which it has with `DRIVER.py --list`, one a
# line, `NAME [LABEL...]`; each becomes the CTest test PREFIX followed by
# NAME (analyze.NAME for PREFIX analyze.), labelled with LABELS and the
# driver's own labels for it. The driver is read again
# whenever it (or a file in DEPENDS) changes, so a test added to a driver is
# run without a second list to keep.
#
#   gpuprof_driver_tests(PREFIX analyze. DRIVER test_analyze.py
#     ARGS $<TARGET_FILE:gpuprof> [AFTER ARG...] [LABELS analyze]
#     [DEPENDS FILE...] [PROPERTIES TIMEOUT 300 ...])
#
# runs `DRIVER ARGS... NAME AFTER...` with the Python CMake found.
function(gpuprof_driver_tests)
  cmake_parse_arguments(PARSE_ARGV 0 GT "" "PREFIX;DRIVER" "ARGS;AFTER;LABELS;DEPENDS;PROPERTIES")
  get_filename_component(_driver "${GT_DRIVER}" ABSOLUTE)
  # no __pycache__ left in the source tree by configuring
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
                          ${Python3_EXECUTABLE} ${_driver} --list
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "gpuprof: ${_driver} --list failed (${_rc}): ${_err}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_driver} ${GT_DEPENDS})
  string(REPLACE "\n" ";" _lines "${_out}")
  set(_n 0)
  foreach(_line IN LISTS _lines)
    string(STRIP "${_line}" _line)
    if(_line STREQUAL "")
      continue()
    endif()
    if(NOT _line MATCHES "^[A-Za-z0-9_]+( [A-Za-z0-9_]+)*$")
      message(FATAL_ERROR "gpuprof: ${_driver} --list: not NAME [LABEL...]: '${_line}'")
    endif()
    string(REPLACE " " ";" _words "${_line}")
    list(POP_FRONT _words _name)
    set(_test ${GT_PREFIX}${_name})
    add_test(NAME ${_test}
             COMMAND ${Python3_EXECUTABLE} ${_driver} ${GT_ARGS} ${_name} ${GT_AFTER})
    set(_labels ${GT_LABELS} ${_words})
    if(_labels)
      set_tests_properties(${_test} PROPERTIES LABELS "${_labels}")
    endif()
    if(GT_PROPERTIES)
      set_tests_properties(${_test} PROPERTIES ${GT_PROPERTIES})
    endif()
    math(EXPR _n "${_n} + 1")
  endforeach()
  if(_n EQUAL 0)
    message(FATAL_ERROR "gpuprof: ${_driver} --list names no test")
  endif()
endfunction()
