# kiln-sim-run --racecheck end to end (engines/check/README.md): the fp16_gemm and rmsnorm
# starters are clean under the default schedules, and the fp16_gemm starter without its second
# __syncthreads() reports the shared-memory races with both .cu lines; a budget that stops the
# launches makes the verdict incomplete.
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
