# kiln-sim-run --synccheck end to end (engines/check/README.md, "synccheck on the simulator"):
# the fp16_gemm and rmsnorm starters are clean under the default schedules, and the fp16_gemm
# starter with its second __syncthreads() only in the first row of threads reports the
# divergent barrier with its .cu line.
#   cmake -DKILN_SIM_RUN=... -DSOURCE_DIR=... -DWORK_DIR=... -P synccheck_starters.cmake
function(synccheck task source expect_rc out_var)
  execute_process(
    COMMAND ${KILN_SIM_RUN} --task ${SOURCE_DIR}/tasks/${task} --source ${source}
            --build-dir ${WORK_DIR}/${task} --synccheck
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "synccheck of ${source} exited ${rc}, expected ${expect_rc}:\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

foreach(task fp16_gemm rmsnorm)
  synccheck(${task} ${SOURCE_DIR}/tasks/${task}/starter.cu 0 report)
  string(JSON verdict GET "${report}" verdict)
  string(JSON schedules LENGTH "${report}" schedules)
  string(JSON uniform GET "${report}" coverage uniform_barriers)
  if(NOT verdict STREQUAL "clean" OR NOT schedules EQUAL 3 OR uniform EQUAL 0)
    message(FATAL_ERROR "the ${task} starter should be clean under 3 schedules:\n${report}")
  endif()
endforeach()

file(READ ${SOURCE_DIR}/tasks/fp16_gemm/starter.cu text)
string(REPLACE "__syncthreads();  // the tiles are overwritten"
               "if (threadIdx.y == 0) __syncthreads();  // diverged:" broken "${text}")
if(broken STREQUAL text)
  message(FATAL_ERROR "the fp16_gemm starter no longer has the barrier this test changes")
endif()
file(WRITE ${WORK_DIR}/gemm_divergent_barrier.cu "${broken}")
synccheck(fp16_gemm ${WORK_DIR}/gemm_divergent_barrier.cu 1 report)
string(JSON verdict GET "${report}" verdict)
string(JSON count LENGTH "${report}" findings)
if(NOT verdict STREQUAL "findings" OR count EQUAL 0)
  message(FATAL_ERROR "the broken starter should have findings:\n${report}")
endif()
set(seen FALSE)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON kind GET "${report}" findings ${i} kind)
  string(JSON where GET "${report}" findings ${i} site source)
  if(kind STREQUAL "barrier_divergence" AND where MATCHES "gemm_divergent_barrier.cu:[0-9]+")
    set(seen TRUE)
  endif()
endforeach()
if(NOT seen)
  message(FATAL_ERROR "no barrier_divergence with a .cu line:\n${report}")
endif()
