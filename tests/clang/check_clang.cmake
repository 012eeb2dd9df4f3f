# Compiles two examples with Clang at -O0 (object files only): the whole kit
# from one include, with the registry declared (TENSORACLE_SEPARATE_REGISTRY),
# and the typed gradient oracle, which instantiates Softmax's kernels on the
# AD scalars. Warnings are errors, as in the GCC builds.
# Usage: cmake -DCLANGXX=... -DSOURCE_DIR=... -DWORK_DIR=... -P check_clang.cmake
file(MAKE_DIRECTORY ${WORK_DIR})
foreach(example whole_kit gradient_check)
  set(defs)
  if(example STREQUAL "whole_kit")
    set(defs -DTENSORACLE_SEPARATE_REGISTRY)
  endif()
  execute_process(
    COMMAND ${CLANGXX} -std=c++20 -O0 -g0 -Wall -Wextra -Werror ${defs} -I${SOURCE_DIR}/include
            -c ${SOURCE_DIR}/examples/${example}.cpp -o ${WORK_DIR}/${example}.o
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "clang: examples/${example}.cpp does not compile (${CLANGXX}):\n${out}${err}")
  endif()
  message(STATUS "clang: examples/${example}.cpp compiles")
endforeach()
