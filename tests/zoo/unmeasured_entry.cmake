# The ctest zoo_meta_refuses_an_unmeasured_entry: a copy of one bundled entry with its
# "measured" emptied must make kiln_zoo_meta_check fail and say how to measure it.
#   cmake -DCHECK=kiln_zoo_meta_check -DZOO=kb/zoo -DENTRY=scan_block -DWORK=DIR -P THIS
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${ZOO}/techniques.json ${ZOO}/${ENTRY} DESTINATION ${WORK})
file(READ ${WORK}/${ENTRY}/meta.json meta)
string(JSON meta SET "${meta}" measured "[]")
file(WRITE ${WORK}/${ENTRY}/meta.json "${meta}")
execute_process(COMMAND ${CHECK} ${WORK} RESULT_VARIABLE status OUTPUT_VARIABLE output)
if(status EQUAL 0 OR NOT output MATCHES "FAIL ${ENTRY}/meta.json: measured: no measurement on an NVIDIA H200")
  message(FATAL_ERROR "kiln_zoo_meta_check accepted an entry without measurements "
                      "(exit ${status}):\n${output}")
endif()
file(REMOVE_RECURSE ${WORK})
