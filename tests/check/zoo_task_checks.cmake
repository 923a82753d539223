# One zoo entry as a zoo task (its meta.json contract, first test shape) under kiln-sim-run's
# race detector and its run-time synchronization checker: both must say clean. For the entries
# RaceZoo/SyncZoo do not launch by hand, or launch only in part (race_zoo_test.cpp, sync_zoo_test.cpp).
#   cmake -DKILN_SIM_RUN=... -DZOO_DIR=... -DENTRY=... -DWORK_DIR=... -P zoo_task_checks.cmake
foreach(mode racecheck synccheck)
  execute_process(
    COMMAND ${KILN_SIM_RUN} --task zoo:${ENTRY} --zoo-dir ${ZOO_DIR}
            --source ${ZOO_DIR}/${ENTRY}/kernel.cu --build-dir ${WORK_DIR} --${mode}
    RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} of zoo:${ENTRY} exited ${rc}:\n${report}\n${err}")
  endif()
  string(JSON verdict GET "${report}" verdict)
  string(JSON schedules LENGTH "${report}" schedules)
  if(NOT verdict STREQUAL "clean" OR schedules LESS 3)
    message(FATAL_ERROR "zoo:${ENTRY} should be clean under ${mode}'s 3 schedules:\n${report}")
  endif()
endforeach()
