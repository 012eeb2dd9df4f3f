# CTest's short fuzzing run (docs/HOSTILE_INPUT.md): builds tests/fuzz with Clang's
# libFuzzer, ASan and UBSan, makes seed corpora (ONNX node tests, a few generated cases
# and a campaign's journal), then runs every target on its seeds and
# regression inputs (tests/fuzz/regressions/<target>/: each a crash found once).
# Fails on any crash, leak, sanitizer report or escaped exception.
# A fixed seed and a number of runs per target (about 10 s each on the 2-core CI
# machine, times SCALE), not a time: the same inputs on every machine, so a CI run
# never fails by the luck of a clock; scripts/fuzz explores further at random.
# SCALE 0 builds and seeds only.
# cmake -DCLANGXX=... -DSOURCE_DIR=<repo> -DWORK=<dir> -DEXE=<tensoracle> -DNODE_TESTS=<dir> -DSCALE=1 -P check_fuzz.cmake
set(targets model tensor case config journal worker)
# Runs per target at SCALE 1: executions/s measured here times about 8 s.
set(runs_model 70000)
set(runs_tensor 150000)
set(runs_case 7000)
set(runs_config 70000)
set(runs_journal 2500)
set(runs_worker 12000)
if(NOT DEFINED SCALE)
  set(SCALE 1)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/fuzz -B ${WORK}/build -G Ninja -DCMAKE_CXX_COMPILER=${CLANGXX}
                        -DCMAKE_BUILD_TYPE=Release
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz: configuring tests/fuzz failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz: building the harness failed:\n${out}\n${err}")
endif()

# Seeds: every 8th node test's model and first input, generated case.json files, the
# journal of a 2-case campaign line by line, the repository's JSON configs, protocol lines.
set(seeds ${WORK}/seeds)
file(REMOVE_RECURSE ${seeds})
foreach(t IN LISTS targets)
  file(MAKE_DIRECTORY ${seeds}/${t})
endforeach()
file(GLOB node_dirs LIST_DIRECTORIES true ${NODE_TESTS}/test_*)
set(k 0)
foreach(d IN LISTS node_dirs)
  math(EXPR pick "${k} % 8")
  math(EXPR k "${k} + 1")
  if(pick EQUAL 0 AND EXISTS ${d}/model.onnx)
    get_filename_component(name ${d} NAME)
    file(COPY_FILE ${d}/model.onnx ${seeds}/model/${name}.onnx)
    if(EXISTS ${d}/test_data_set_0/input_0.pb)
      file(COPY_FILE ${d}/test_data_set_0/input_0.pb ${seeds}/tensor/${name}.pb)
    endif()
  endif()
endforeach()
execute_process(COMMAND ${EXE} campaign --backend reference --count 2 --seed 3 --quiet --no-reduce --out ${WORK}/campaign
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz: the seed campaign failed (${rc}): ${err}")
endif()
file(STRINGS ${WORK}/campaign/results.jsonl lines)
set(k 0)
foreach(l IN LISTS lines)
  file(WRITE ${seeds}/journal/line_${k} "${l}\n")
  math(EXPR k "${k} + 1")
endforeach()
execute_process(COMMAND ${EXE} gen --count 3 --seed 4 --quiet --out ${WORK}/gen RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
file(GLOB cases ${WORK}/gen/s4_c*/case.json)
foreach(c IN LISTS cases)
  get_filename_component(parent ${c} DIRECTORY)
  get_filename_component(name ${parent} NAME)
  file(COPY_FILE ${c} ${seeds}/case/${name}.json)
endforeach()
file(GLOB configs ${SOURCE_DIR}/examples/*.json ${SOURCE_DIR}/tests/data/*.json)
foreach(c IN LISTS configs)
  file(COPY ${c} DESTINATION ${seeds}/config)
endforeach()
file(WRITE ${seeds}/config/small.json "{\"include_ops\": [\"Conv\", \"Relu\"], \"max_nodes\": 3, \"dtypes\": [\"f32\"], \"motif_probability\": 0.5}\n")
file(WRITE ${seeds}/worker/ok "m/model.onnx\tin\tout\n{\"status\":\"ok\",\"message\":\"\"}\noutput_0.pb\noutput_1.pb\n")
file(WRITE ${seeds}/worker/error "{\"status\":\"runtime_error\",\"message\":\"boom\\nsecond line\"}\n")

set(report "")
foreach(t IN LISTS targets)
  set(corpus ${WORK}/corpus/${t})
  file(REMOVE_RECURSE ${corpus} ${WORK}/artifacts/${t})
  file(MAKE_DIRECTORY ${corpus} ${WORK}/artifacts/${t})
  # The regression inputs first, each once: a crash found before must stay fixed.
  file(GLOB regressions ${SOURCE_DIR}/tests/fuzz/regressions/${t}/*)
  if(regressions)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env TENSORACLE_FUZZ_TARGET=${t} ${WORK}/build/tensoracle_fuzz -runs=1 ${regressions}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "fuzz ${t}: a regression input fails again (${rc}):\n${err}")
    endif()
  endif()
  math(EXPR runs "${runs_${t}} * ${SCALE}")
  if(runs EQUAL 0)
    continue()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env TENSORACLE_FUZZ_TARGET=${t} ${WORK}/build/tensoracle_fuzz -seed=1 -runs=${runs}
                          -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/${t}/ ${corpus} ${seeds}/${t}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(GLOB found ${WORK}/artifacts/${t}/*)
    message(FATAL_ERROR "fuzz ${t}: a finding (${rc}), input kept in ${found}; add it to tests/fuzz/regressions/${t}/ with the fix:\n${err}")
  endif()
  string(REGEX MATCH "stat::average_exec_per_sec: *[0-9]+" rate "${err}")
  string(REGEX MATCHALL "cov: [0-9]+ ft: [0-9]+" cov "${err}")
  list(POP_BACK cov last_cov)
  string(REGEX REPLACE "[^0-9]*([0-9]+)$" "\\1" rate "${rate}")
  string(APPEND report "  ${t}: ${runs} runs, ${rate}/s, ${last_cov}\n")
endforeach()
message(STATUS "fuzz OK: seed 1, no finding\n${report}")
