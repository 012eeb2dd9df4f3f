# Flags for tensoracle's own targets (tests, examples, benchmarks). They are
# never put on the INTERFACE target: consumers keep their own flags.
function(tensoracle_target_defaults target)
  target_compile_features(${target} PRIVATE cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion>)
    if(TENSORACLE_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
    if(TENSORACLE_SANITIZE)
      target_compile_options(${target} PRIVATE -fsanitize=${TENSORACLE_SANITIZE} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
      target_link_options(${target} PRIVATE -fsanitize=${TENSORACLE_SANITIZE})
    endif()
  endif()
endfunction()
