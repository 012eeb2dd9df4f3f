# cmake -DEXE=<tensoracle> -DOUT=<dir> [-DCHROMIUM=<chromium>] -P check_report.cmake
# Sharding and the report: a campaign run as 4 shards and merged equals the same
# campaign run in one process (same case ids, same signatures with the same
# counts), and its report.html renders in a real headless browser: every table
# and every chart drawn (SVG boxes of non-zero size), no error in the page.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(config ${OUT}/config.json)
file(WRITE ${config} [[{"include_ops": ["Sigmoid", "Relu", "Tanh", "Add", "Mul", "Neg", "Abs"], "dtypes": ["f32", "f64"], "max_nodes": 3, "max_dim": 8}]])
set(planted "${EXE} run-reference --plant-wrong Sigmoid --plant-crash Relu {model} {inputs} {outputs}")
function(campaign)
  execute_process(COMMAND ${EXE} campaign --quiet --no-reduce --seed 9 --count 24 --config ${config} --timeout 5 --mutants 1
                          --backend reference --backend-cmd ${planted} --backend-name planted ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "campaign ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

campaign(--out ${OUT}/whole)
foreach(i RANGE 3)
  campaign(--out ${OUT}/sharded --shard ${i}/4)
endforeach()
# The environment of a Slurm array task picks the shard too.
set(ENV{SLURM_ARRAY_TASK_ID} 3)
set(ENV{SLURM_ARRAY_TASK_MIN} 0)
set(ENV{SLURM_ARRAY_TASK_COUNT} 4)
campaign(--out ${OUT}/slurm)
unset(ENV{SLURM_ARRAY_TASK_ID})
unset(ENV{SLURM_ARRAY_TASK_COUNT})
if(NOT EXISTS ${OUT}/slurm/shard-3-of-4/summary.json)
  message(FATAL_ERROR "the Slurm environment did not select shard 3 of 4")
endif()
file(GLOB shards ${OUT}/sharded/shard-*)
list(LENGTH shards n)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "expected 4 shard folders, found ${n}")
endif()
execute_process(COMMAND ${EXE} report ${shards} --out ${OUT}/merged RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "report --out failed (${rc}):\n${out}\n${err}")
endif()

# Same cases, same signatures and counts.
function(summary_facts dir var)
  file(READ ${dir}/summary.json s)
  string(JSON cases GET "${s}" cases)
  string(JSON n LENGTH "${s}" signatures)
  set(facts "cases=${cases}")
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    set(sigs "")
    foreach(i RANGE ${last})
      string(JSON id GET "${s}" signatures ${i} id)
      string(JSON count GET "${s}" signatures ${i} count)
      list(APPEND sigs "${id}:${count}")
    endforeach()
    list(SORT sigs)
    string(APPEND facts ";${sigs}")
  endif()
  file(STRINGS ${dir}/results.jsonl lines)
  set(ids "")
  foreach(l IN LISTS lines)
    string(JSON c GET "${l}" case)
    list(APPEND ids ${c})
  endforeach()
  list(SORT ids)
  string(APPEND facts ";${ids}")
  set(${var} "${facts}" PARENT_SCOPE)
endfunction()
summary_facts(${OUT}/whole whole)
summary_facts(${OUT}/merged merged)
if(NOT whole STREQUAL merged)
  message(FATAL_ERROR "4 merged shards differ from the one-process campaign:\n${whole}\nvs\n${merged}")
endif()
if(NOT whole MATCHES ":[0-9]")
  message(FATAL_ERROR "the planted bugs gave no signature: ${whole}")
endif()
foreach(d whole merged)
  if(NOT EXISTS ${OUT}/${d}/report.html)
    message(FATAL_ERROR "${d}/report.html was not written")
  endif()
endforeach()

# The report in a real browser (Debian's chromium; scripts/setup installs it).
if(NOT CHROMIUM)
  message("SKIP: no chromium to render report.html (the merge check passed)")
  return()
endif()
file(READ ${OUT}/merged/report.html html)
string(REPLACE "</body>" [[<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const bad = [];
  const svgs = [...document.querySelectorAll('svg.chart')];
  for (const s of svgs) {
    const r = s.getBoundingClientRect();
    const marks = [...s.querySelectorAll('polyline.series, rect.bar')].filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; });
    if (r.width < 100 || r.height < 100 || marks.length === 0) bad.push('chart ' + s.querySelector('title').textContent);
    if (s.querySelectorAll('g.axes text').length < 4) bad.push('axes of ' + s.querySelector('title').textContent);
  }
  const tables = [...document.querySelectorAll('table')];
  for (const t of tables) if (t.getBoundingClientRect().height < 10 || t.rows.length < 2) bad.push('table ' + (t.id || '?'));
  document.body.setAttribute('data-check', (bad.length || window.__errors.length ? 'bad:' + bad.concat(window.__errors).join('|') : 'ok') +
    ' charts=' + svgs.length + ' tables=' + tables.length);
});
</script></body>]] checked "${html}")
file(WRITE ${OUT}/merged/report_check.html "${checked}")
file(MAKE_DIRECTORY ${OUT}/chromium-profile)
execute_process(COMMAND ${CHROMIUM} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
                        --disable-component-update --disable-sync --user-data-dir=${OUT}/chromium-profile --virtual-time-budget=5000
                        --enable-logging=stderr --v=0 --dump-dom file://${OUT}/merged/report_check.html
  RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE log TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium failed (${rc}):\n${log}")
endif()
string(REGEX MATCH "data-check=\"[^\"]*\"" check "${dom}")
if(NOT check MATCHES "data-check=\"ok charts=([0-9]+) tables=([0-9]+)\"")
  message(FATAL_ERROR "report.html does not render as it should: ${check}\n${log}")
endif()
if(CMAKE_MATCH_1 LESS 2 OR CMAKE_MATCH_2 LESS 4)
  message(FATAL_ERROR "report.html shows ${CMAKE_MATCH_1} charts and ${CMAKE_MATCH_2} tables: ${check}")
endif()
if(log MATCHES "CONSOLE\\([0-9]+\\)" OR log MATCHES "Uncaught")
  message(FATAL_ERROR "the page logged to the console:\n${log}")
endif()
message("report OK: ${check}")
