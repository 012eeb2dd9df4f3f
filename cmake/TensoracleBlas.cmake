# A CBLAS (Debian: libopenblas-dev) for the optional BLAS fast paths
# (<tensoracle/blas.hpp>): TENSORACLE_CBLAS_FOUND, and tensoracle_link_cblas()
# to give a target cblas.h, the library and, optionally, a definition.
include_guard(GLOBAL)
find_package(BLAS QUIET)
find_path(TENSORACLE_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES x86_64-linux-gnu openblas)
if(BLAS_FOUND AND TENSORACLE_CBLAS_INCLUDE_DIR)
  set(TENSORACLE_CBLAS_FOUND ON)
else()
  set(TENSORACLE_CBLAS_FOUND OFF)
endif()

function(tensoracle_link_cblas target)
  target_include_directories(${target} SYSTEM PRIVATE ${TENSORACLE_CBLAS_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE ${BLAS_LIBRARIES})
  if(ARGC GREATER 1)
    target_compile_definitions(${target} PRIVATE ${ARGV1})
  endif()
endfunction()
