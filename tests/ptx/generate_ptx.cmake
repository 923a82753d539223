# Runs nvcc -ptx for one corpus source. A failed compile (say, a zoo kernel someone is still
# writing) must not break the build: the output then holds the error as a comment, and the
# corpus test reports it for that entry alone.
#   cmake -DNVCC=... -DSOURCE=... -DOUTPUT=... -DFLAGS="a|b|c" -P generate_ptx.cmake
string(REPLACE "|" ";" flag_list "${FLAGS}")
execute_process(
  COMMAND "${NVCC}" -ptx ${flag_list} "${SOURCE}" -o "${OUTPUT}.tmp"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(rc EQUAL 0)
  file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
else()
  file(REMOVE "${OUTPUT}.tmp")
  string(REPLACE "\n" "\n// " err_comment "${err}")
  file(WRITE "${OUTPUT}" "// kiln: nvcc failed (exit ${rc}) on ${SOURCE}\n// ${err_comment}\n")
  message(WARNING "kiln ptx corpus: nvcc failed on ${SOURCE}: ${err}")
endif()
