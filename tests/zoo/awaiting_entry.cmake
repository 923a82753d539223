# The ctests zoo_meta_awaiting_list_unmeasured_entry and zoo_meta_awaiting_list_measured_entry:
# a copy of one bundled entry listed in awaiting_h200.json must pass kiln_zoo_meta_check, marked
# "awaiting H200 measurement", when its "measured" is empty (MODE=unmeasured), and fail, saying to
# remove it from the list, when it keeps its measurements (MODE=measured); a list naming no entry
# fails (MODE=stale).
#   cmake -DCHECK=kiln_zoo_meta_check -DZOO=kb/zoo -DENTRY=scan_block -DMODE=... -DWORK=DIR -P THIS
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${ZOO}/techniques.json ${ZOO}/${ENTRY} DESTINATION ${WORK})
if(MODE STREQUAL "stale")  # a listed id with no entry folder
  file(WRITE ${WORK}/awaiting_h200.json "{\"why\": \"test\", \"entries\": [\"no_such_entry\"]}\n")
else()
  file(WRITE ${WORK}/awaiting_h200.json "{\"why\": \"test\", \"entries\": [\"${ENTRY}\"]}\n")
endif()
if(MODE STREQUAL "unmeasured")
  file(READ ${WORK}/${ENTRY}/meta.json meta)
  string(JSON meta SET "${meta}" measured "[]")
  file(WRITE ${WORK}/${ENTRY}/meta.json "${meta}")
endif()
execute_process(COMMAND ${CHECK} ${WORK} RESULT_VARIABLE status OUTPUT_VARIABLE output)
if(MODE STREQUAL "unmeasured")
  if(NOT status EQUAL 0 OR NOT output MATCHES "ok   ${ENTRY} \\(awaiting H200 measurement\\)")
    message(FATAL_ERROR "kiln_zoo_meta_check refused a listed unmeasured entry, or did not mark "
                        "it as awaiting (exit ${status}):\n${output}")
  endif()
elseif(MODE STREQUAL "stale")
  if(status EQUAL 0 OR NOT output MATCHES "FAIL awaiting_h200.json: lists 'no_such_entry', which is no zoo entry")
    message(FATAL_ERROR "kiln_zoo_meta_check accepted a list naming no entry (exit ${status}):\n${output}")
  endif()
else()
  if(status EQUAL 0 OR NOT output MATCHES "FAIL ${ENTRY}/meta.json: measured: has an H200 measurement")
    message(FATAL_ERROR "kiln_zoo_meta_check accepted a measured entry still listed as awaiting "
                        "(exit ${status}):\n${output}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
