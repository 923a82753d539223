# kiln-sim-run --racecheck end to end (engines/check/README.md): the fp16_gemm and rmsnorm
# starters are clean under the default schedules, and the fp16_gemm starter without its second
# __syncthreads() reports the shared-memory races with both .cu lines; a budget that stops the
# launches makes the verdict incomplete; the zoo's wgmma + TMA GEMM is clean and reports the
# stage-reuse race when a stage is released before its wgmma group retired.
#   cmake -DKILN_SIM_RUN=... -DSOURCE_DIR=... -DWORK_DIR=... -P racecheck_starters.cmake
function(racecheck task source expect_rc out_var)
  execute_process(
    COMMAND ${KILN_SIM_RUN} --task ${SOURCE_DIR}/tasks/${task} --source ${source}
            --build-dir ${WORK_DIR}/${task} --racecheck
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "racecheck of ${source} exited ${rc}, expected ${expect_rc}:\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

foreach(task fp16_gemm rmsnorm)
  racecheck(${task} ${SOURCE_DIR}/tasks/${task}/starter.cu 0 report)
  string(JSON verdict GET "${report}" verdict)
  string(JSON schedules LENGTH "${report}" schedules)
  if(NOT verdict STREQUAL "clean" OR NOT schedules EQUAL 3)
    message(FATAL_ERROR "the ${task} starter should be clean under 3 schedules:\n${report}")
  endif()
endforeach()

file(READ ${SOURCE_DIR}/tasks/fp16_gemm/starter.cu text)
string(REPLACE "__syncthreads();  // the tiles are overwritten" "// barrier removed:" broken
               "${text}")
if(broken STREQUAL text)
  message(FATAL_ERROR "the fp16_gemm starter no longer has the barrier this test removes")
endif()
file(WRITE ${WORK_DIR}/gemm_missing_barrier.cu "${broken}")
racecheck(fp16_gemm ${WORK_DIR}/gemm_missing_barrier.cu 1 report)
string(JSON verdict GET "${report}" verdict)
string(JSON count LENGTH "${report}" findings)
if(NOT verdict STREQUAL "findings" OR count EQUAL 0)
  message(FATAL_ERROR "the broken starter should have findings:\n${report}")
endif()
set(seen_barrier FALSE)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON cause GET "${report}" findings ${i} cause)
  string(JSON space GET "${report}" findings ${i} space)
  string(JSON where GET "${report}" findings ${i} second source)
  if(cause STREQUAL "missing_barrier" AND space STREQUAL "shared" AND where MATCHES
                                                                      "gemm_missing_barrier.cu:[0-9]+")
    set(seen_barrier TRUE)
  endif()
endforeach()
if(NOT seen_barrier)
  message(FATAL_ERROR "no missing_barrier race on shared memory with a .cu line:\n${report}")
endif()

# A budget that stops every launch: nothing was checked whole, so the verdict is incomplete.
execute_process(
  COMMAND ${KILN_SIM_RUN} --task ${SOURCE_DIR}/tasks/rmsnorm
          --source ${SOURCE_DIR}/tasks/rmsnorm/starter.cu --build-dir ${WORK_DIR}/rmsnorm
          --racecheck --schedules 1 --instruction-budget 100
  RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
string(JSON verdict GET "${report}" verdict)
string(JSON notes LENGTH "${report}" notes)
if(NOT rc EQUAL 1 OR NOT verdict STREQUAL "incomplete" OR notes EQUAL 0)
  message(FATAL_ERROR "a racecheck stopped by its budget should be incomplete:\n${report}")
endif()

# The zoo's wgmma + TMA GEMM as an fp16_gemm candidate is clean; keeping two wgmma groups in
# flight while still releasing the older stage (wgmma.wait_group 2 instead of 1) lets the TMA
# refill overwrite operands a pending wgmma reads: a war async_proxy race with both .cu lines.
set(zoo_gemm ${SOURCE_DIR}/kb/zoo/gemm_wgmma_tma/kernel.cu)
racecheck(fp16_gemm ${zoo_gemm} 0 report)
string(JSON verdict GET "${report}" verdict)
if(NOT verdict STREQUAL "clean")
  message(FATAL_ERROR "the zoo's wgmma + TMA GEMM should be clean:\n${report}")
endif()
file(READ ${zoo_gemm} text)
string(REPLACE "    wgmma_wait<1>();" "    wgmma_wait<2>();" broken "${text}")
if(broken STREQUAL text)
  message(FATAL_ERROR "gemm_wgmma_tma no longer has the wgmma_wait<1>() this test changes")
endif()
file(WRITE ${WORK_DIR}/gemm_wgmma_early_release.cu "${broken}")
racecheck(fp16_gemm ${WORK_DIR}/gemm_wgmma_early_release.cu 1 report)
string(JSON count LENGTH "${report}" findings)
set(seen_reuse FALSE)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON kind GET "${report}" findings ${i} kind)
  string(JSON cause GET "${report}" findings ${i} cause)
  string(JSON first GET "${report}" findings ${i} first instruction)
  string(JSON where GET "${report}" findings ${i} second source)
  if(kind STREQUAL "war" AND cause STREQUAL "async_proxy" AND first MATCHES "^wgmma.mma_async"
     AND where MATCHES "gemm_wgmma_early_release.cu:[0-9]+")
    set(seen_reuse TRUE)
  endif()
endforeach()
if(NOT seen_reuse)
  message(FATAL_ERROR "no war async_proxy race between a wgmma and the stage refill:\n${report}")
endif()
