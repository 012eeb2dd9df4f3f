# cmake -DEXE=<tensoracle> -DOUT=<dir> -P check_memory.cmake
# The memory budget on the command line (docs/HOSTILE_INPUT.md): a bad size is refused,
# cases the reference cannot afford are reference_skipped, and a backend that asks for
# more than --backend-memory-limit fails with that said.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

execute_process(COMMAND ${EXE} --memory-limit 12X gen --out ${OUT}/gen RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--memory-limit: memory size '12X' has an unknown unit 'X'")
  message(FATAL_ERROR "a bad --memory-limit was not refused (${rc}): ${err}")
endif()
execute_process(COMMAND ${EXE} gen --out ${OUT}/gen --backend-memory-limit -1 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--backend-memory-limit: memory size '-1' must be positive")
  message(FATAL_ERROR "a bad --backend-memory-limit was not refused (${rc}): ${err}")
endif()

# 4 KiB: the generator's own tensors do not fit, so every case is skipped, none fails.
execute_process(COMMAND ${EXE} campaign --memory-limit 4K --backend-memory-limit none --backend reference --count 3 --seed 0
                        --quiet --no-reduce --out ${OUT}/skipped
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "campaign under a 4 KiB budget failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT}/skipped/summary.json summary)
string(JSON skipped GET "${summary}" reference_skipped)
if(skipped LESS 1 OR NOT out MATCHES "reference_skipped: [0-9]+ \\(over the memory budget")
  message(FATAL_ERROR "no case labelled reference_skipped under a 4 KiB budget:\n${out}")
endif()
file(READ ${OUT}/skipped/results.jsonl lines)
if(NOT lines MATCHES "\"reference_skipped\":\"[^\"]*needs [0-9.]+ [KMG]?i?B \\([0-9]+ bytes\\), over the memory budget of 4.0 KiB")
  message(FATAL_ERROR "results.jsonl does not say what did not fit:\n${lines}")
endif()

# A backend asking for 1 GiB under a 64 MiB limit: a runtime error saying why.
find_program(PYTHON3 python3)
if(PYTHON3)
  execute_process(COMMAND ${EXE} campaign --backend-memory-limit 64M --backend-cmd "${PYTHON3} -c \"bytearray(1 << 30)\" {model} {inputs} {outputs}"
                          --backend-name hungry --count 1 --seed 0 --quiet --no-reduce --no-recheck --out ${OUT}/hungry
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(READ ${OUT}/hungry/results.jsonl lines)
  if(NOT lines MATCHES "out of memory under the backends' limit of 64.0 MiB")
    message(FATAL_ERROR "a backend over --backend-memory-limit is not labelled out of memory (${rc}):\n${out}\n${err}\n${lines}")
  endif()
endif()
message(STATUS "memory OK")
