# Builds and runs tests/consumer against tensoracle, as a user would.
#   -DMODE=install|install_compiled|subdirectory -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=...
#   (install_compiled also -DBUILD_DIR=<a built tree of the kit>)
cmake_minimum_required(VERSION 3.21)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(consumer_src ${SOURCE_DIR}/tests/consumer)
set(common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)

if(MODE STREQUAL "install")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/kit ${common}
      -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix
      -DTENSORACLE_BUILD_TESTS=OFF -DTENSORACLE_BUILD_EXAMPLES=OFF -DTENSORACLE_BUILD_BENCHMARKS=OFF -DTENSORACLE_BUILD_CLI=OFF
      -DTENSORACLE_WITH_CUDA=OFF -DTENSORACLE_BUILD_COMPILED=OFF)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/kit)
  foreach(f include/tensoracle/tensoracle.hpp include/tensoracle/core.hpp share/cmake/tensoracle/tensoracleConfig.cmake
            share/cmake/tensoracle/tensoracleConfigVersion.cmake share/cmake/tensoracle/tensoracleTargets.cmake)
    if(NOT EXISTS ${WORK_DIR}/prefix/${f})
      message(FATAL_ERROR "install is missing ${f}")
    endif()
  endforeach()
  run(${CMAKE_COMMAND} -S ${consumer_src} -B ${WORK_DIR}/consumer ${common}
      -DTENSORACLE_CONSUMER_MODE=install -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
elseif(MODE STREQUAL "install_compiled")
  # The library as this build tree (BUILD_DIR) built it, installed as a user would.
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component tensoracle_development)
  file(GLOB_RECURSE lib ${WORK_DIR}/prefix/*/libtensoracle.a)
  if(NOT lib)
    message(FATAL_ERROR "install is missing libtensoracle.a")
  endif()
  run(${CMAKE_COMMAND} -S ${consumer_src} -B ${WORK_DIR}/consumer ${common}
      -DTENSORACLE_CONSUMER_MODE=install -DTENSORACLE_CONSUMER_COMPILED=ON -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
elseif(MODE STREQUAL "subdirectory")
  run(${CMAKE_COMMAND} -S ${consumer_src} -B ${WORK_DIR}/consumer ${common}
      -DTENSORACLE_CONSUMER_MODE=subdirectory -DTENSORACLE_SOURCE_DIR=${SOURCE_DIR}
      -DTENSORACLE_WITH_CUDA=OFF)
else()
  message(FATAL_ERROR "MODE must be install, install_compiled or subdirectory")
endif()

run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
