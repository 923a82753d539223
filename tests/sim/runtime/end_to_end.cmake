# End to end on the real simulator: candidate code built by nvcc against libkiln_cudart_sim.so
# (the recipe in engines/sim/runtime/README.md), loaded with dlopen, run, checked.
set(_kiln_simrt_lib_dir $<TARGET_FILE_DIR:kiln_cudart_sim>)
function(_kiln_simrt_linked_candidate name source)
  add_custom_command(OUTPUT ${_kiln_simrt_out}/${name}.so
    COMMAND ${_kiln_nvcc} -cudart none -shared -Xcompiler -fPIC --no-compress
            -gencode arch=compute_90a,code=compute_90a -lineinfo ${ARGN}
            -o ${_kiln_simrt_out}/${name}.so ${source}
            -L${_kiln_simrt_lib_dir} -lkiln_cudart_sim -Xlinker -rpath=${_kiln_simrt_lib_dir}
    DEPENDS ${source} kiln_cudart_sim VERBATIM)
endfunction()
_kiln_simrt_linked_candidate(vector_add ${CMAKE_CURRENT_SOURCE_DIR}/vector_add.cu)
_kiln_simrt_linked_candidate(printing ${CMAKE_CURRENT_SOURCE_DIR}/printing.cu)
add_custom_target(kiln_sim_runtime_e2e_candidates DEPENDS ${_kiln_simrt_out}/vector_add.so
  ${_kiln_simrt_out}/printing.so)

add_executable(kiln_sim_runtime_e2e_test end_to_end_test.cpp)
add_dependencies(kiln_sim_runtime_e2e_test kiln_sim_runtime_e2e_candidates)
target_compile_definitions(kiln_sim_runtime_e2e_test PRIVATE
  KILN_SIMRT_VECTOR_ADD="${_kiln_simrt_out}/vector_add.so"
  KILN_SIMRT_PRINTING="${_kiln_simrt_out}/printing.so")
target_include_directories(kiln_sim_runtime_e2e_test SYSTEM PRIVATE ${KILN_CUDA_ROOT}/include)
target_link_libraries(kiln_sim_runtime_e2e_test PRIVATE kiln_cudart_sim
  nlohmann_json::nlohmann_json GTest::gtest_main ${CMAKE_DL_LIBS} kiln_warnings)
gtest_discover_tests(kiln_sim_runtime_e2e_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS sim)

# Memory shared with the device from outside the simulator: CUDA IPC across two processes
# (kiln_sim_ipc_child is the second one) and mapped pinned host memory.
_kiln_simrt_linked_candidate(sharing_kernels ${CMAKE_CURRENT_SOURCE_DIR}/sharing_kernels.cu)
add_custom_target(kiln_sim_runtime_sharing_kernels DEPENDS ${_kiln_simrt_out}/sharing_kernels.so)
add_executable(kiln_sim_ipc_child ipc_child.cpp)
target_include_directories(kiln_sim_ipc_child SYSTEM PRIVATE ${KILN_CUDA_ROOT}/include)
target_link_libraries(kiln_sim_ipc_child PRIVATE kiln_cudart_sim kiln_confine ${CMAKE_DL_LIBS}
  kiln_warnings)
add_executable(kiln_sim_runtime_sharing_test ipc_test.cpp mapped_memory_test.cpp)
add_dependencies(kiln_sim_runtime_sharing_test kiln_sim_runtime_sharing_kernels kiln_sim_ipc_child)
target_compile_definitions(kiln_sim_runtime_sharing_test PRIVATE
  KILN_SIMRT_SHARING_KERNELS="${_kiln_simrt_out}/sharing_kernels.so"
  KILN_SIMRT_IPC_CHILD="$<TARGET_FILE:kiln_sim_ipc_child>")
target_include_directories(kiln_sim_runtime_sharing_test SYSTEM PRIVATE ${KILN_CUDA_ROOT}/include)
target_link_libraries(kiln_sim_runtime_sharing_test PRIVATE kiln_cudart_sim GTest::gtest_main
  ${CMAKE_DL_LIBS} kiln_warnings)
gtest_discover_tests(kiln_sim_runtime_sharing_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS sim)

# kiln-sim-run on the task starters and on deliberately broken candidates.
if(TARGET kiln-sim-run)
  set(_kiln_wrong_outputs)
  foreach(_mode 0 1 2 3)
    _kiln_simrt_linked_candidate(wrong_gemm_${_mode} ${CMAKE_CURRENT_SOURCE_DIR}/wrong_gemm.cu
      -DKILN_TEST_MODE=${_mode} -I${KILN_TASKS_DIR}/include)
    list(APPEND _kiln_wrong_outputs ${_kiln_simrt_out}/wrong_gemm_${_mode}.so)
  endforeach()
  add_custom_target(kiln_sim_run_candidates DEPENDS ${_kiln_wrong_outputs})
  add_executable(kiln_sim_run_test sim_run_test.cpp)
  add_dependencies(kiln_sim_run_test kiln_sim_run_candidates kiln-sim-run)
  target_compile_definitions(kiln_sim_run_test PRIVATE
    KILN_SIM_RUN="$<TARGET_FILE:kiln-sim-run>"
    KILN_TASKS_DIR="${KILN_TASKS_DIR}"
    KILN_SIMRT_BUILD="${_kiln_simrt_out}"
    KILN_SIMRT_WRONG_GEMM_0="${_kiln_simrt_out}/wrong_gemm_0.so"
    KILN_SIMRT_WRONG_GEMM_1="${_kiln_simrt_out}/wrong_gemm_1.so"
    KILN_SIMRT_WRONG_GEMM_2="${_kiln_simrt_out}/wrong_gemm_2.so"
    KILN_SIMRT_WRONG_GEMM_3="${_kiln_simrt_out}/wrong_gemm_3.so")
  target_link_libraries(kiln_sim_run_test PRIVATE nlohmann_json::nlohmann_json GTest::gtest_main
    kiln_warnings)
  gtest_discover_tests(kiln_sim_run_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS sim TIMEOUT 300)
endif()

# Every zoo entry whose op has a task passes kiln-sim-run at that task's sim_workloads: one
# ctest per entry (each builds the kernel with nvcc, a few seconds, then simulates). Ops with
# no task (attention, fp8 and grouped GEMM, layernorm, reductions, ...) are not covered.
if(TARGET kiln-sim-run)
  set(_kiln_zoo_dir ${CMAKE_CURRENT_SOURCE_DIR}/../../../kb/zoo)
  set(_kiln_zoo_task_gemm_tn fp16_gemm)
  set(_kiln_zoo_task_rmsnorm rmsnorm)
  # Entries that handle only some of the task's shapes and refuse the rest with
  # KILN_ERR_UNSUPPORTED, as the ABI asks: only the sim_workloads they handle run.
  set(_kiln_zoo_workloads_gemv_decode_hbm 16x128x256)  # M <= 16 only
  file(GLOB _kiln_zoo_metas ${_kiln_zoo_dir}/*/meta.json)
  foreach(_meta ${_kiln_zoo_metas})
    file(READ ${_meta} _meta_text)
    string(JSON _op ERROR_VARIABLE _op_error GET "${_meta_text}" op)
    if(_op_error OR NOT DEFINED _kiln_zoo_task_${_op})
      continue()
    endif()
    get_filename_component(_entry_dir ${_meta} DIRECTORY)
    get_filename_component(_entry ${_entry_dir} NAME)
    set(_workload_args "")
    foreach(_workload IN LISTS _kiln_zoo_workloads_${_entry})
      list(APPEND _workload_args --workload ${_workload})
    endforeach()
    add_test(NAME sim_zoo.${_entry}
      COMMAND kiln-sim-run --task ${KILN_TASKS_DIR}/${_kiln_zoo_task_${_op}}
              --source ${_entry_dir}/kernel.cu ${_workload_args}
              --build-dir ${_kiln_simrt_out}/zoo_sim/${_entry})
    set_tests_properties(sim_zoo.${_entry} PROPERTIES LABELS "sim;zoo" TIMEOUT 300)
  endforeach()
endif()
