# kiln's layering, enforced (docs/ARCHITECTURE.md has the picture). Every kiln library is listed
# here with the kiln libraries it may link; kiln_check_layers(), called once every library is
# defined, stops the configure step when a library links one it may not (an arrow up a layer, or
# sideways where none may run, such as the runner to MCP) or when a library is missing from the
# table. A library's include directories reach only what it links, so a wrong #include fails to
# build and a wrong link fails to configure.

# Foundation: no kiln library below it.
set(_kiln_may_link_kiln_base "")
set(_kiln_may_link_kiln_sqlite kiln_base)
set(_kiln_may_link_kiln_http kiln_base)
set(_kiln_may_link_kiln_confine kiln_base)
# Protocols and data: MCP knows nothing of GPUs, tasks or engines.
set(_kiln_may_link_kiln_mcp kiln_base kiln_http)
set(_kiln_may_link_kiln_tasks kiln_base)
set(_kiln_may_link_kiln_kb kiln_base kiln_sqlite)
set(_kiln_may_link_kiln_zoo_references kiln_base)
# Engines, ordered ptx < compiler < sim < check; never the runner, the tools or MCP.
set(_kiln_may_link_kiln_ptx kiln_base)
set(_kiln_may_link_kiln_compiler kiln_base kiln_ptx kiln_tasks)
set(_kiln_may_link_kiln_sim kiln_base kiln_ptx)
set(_kiln_may_link_kiln_cudart_sim_pure kiln_base kiln_ptx kiln_sim)
set(_kiln_may_link_kiln_cudart_sim_api kiln_base kiln_ptx kiln_sim kiln_cudart_sim_pure)
set(_kiln_may_link_kiln_cudart_sim kiln_base kiln_ptx kiln_sim kiln_cudart_sim_pure
    kiln_cudart_sim_api)
set(_kiln_may_link_kiln_check kiln_base kiln_ptx kiln_compiler kiln_sim)
# Services: the frontier, the runner and its worker. The runner never links MCP.
set(_kiln_may_link_kiln_frontier kiln_base kiln_sqlite kiln_tasks)
# The runner protocol (headers only) is what the server and its worker share; the worker never
# links the server.
set(_kiln_may_link_kiln_runner_protocol kiln_base)
set(_kiln_may_link_kiln_runner kiln_base kiln_http kiln_tasks kiln_runner_protocol)
set(_kiln_may_link_kiln_worker_core kiln_base kiln_tasks kiln_compiler kiln_ptx
    kiln_runner_protocol)
set(_kiln_may_link_kiln_worker_gpu kiln_base kiln_confine kiln_tasks kiln_compiler kiln_ptx
    kiln_runner_protocol kiln_worker_core)
set(_kiln_may_link_kiln_worker_gpu_host kiln_base kiln_confine kiln_tasks kiln_compiler kiln_ptx
    kiln_runner_protocol kiln_worker_core)
# The simulated worker: the same, with kiln's simulated CUDA runtime in place of libcudart.
set(_kiln_may_link_kiln_worker_gpu_sim kiln_base kiln_confine kiln_tasks kiln_compiler kiln_ptx
    kiln_runner_protocol kiln_worker_core kiln_cudart_sim)
# Recorded sessions replayed and traced: a client of MCP over stdio or HTTP, reading the
# recording with the frontier's session counting; nothing of the engines, runner or tools.
set(_kiln_may_link_kiln_replay kiln_base kiln_mcp kiln_frontier)
# Authoring and checking a task bundle (kiln task new/check): the loader, the build step, the
# runner's client; never MCP or the tools.
set(_kiln_may_link_kiln_taskcheck kiln_base kiln_http kiln_tasks kiln_ptx kiln_compiler
    kiln_runner kiln_runner_protocol)
# The MCP tool handlers: everything above, nothing of the programs.
set(_kiln_may_link_kiln_tools kiln_base kiln_sqlite kiln_http kiln_mcp kiln_tasks kiln_kb
    kiln_ptx kiln_compiler kiln_sim kiln_check kiln_frontier kiln_runner kiln_runner_protocol)

# Interface targets that carry build settings, not code.
set(_kiln_layer_exempt kiln_warnings)

function(_kiln_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _kiln_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(kiln_check_layers)
  _kiln_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(problems "")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "LIBRARY$" OR NOT target MATCHES "^kiln_" OR target IN_LIST
       _kiln_layer_exempt)
      continue()
    endif()
    if(NOT DEFINED _kiln_may_link_${target})
      string(APPEND problems "\n  ${target} is not in cmake/kiln_layers.cmake: add it with the "
             "kiln libraries it may link")
      continue()
    endif()
    set(links "")
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(value ${target} ${property})
      if(value)
        list(APPEND links ${value})
      endif()
    endforeach()
    # $<LINK_ONLY:x> (a private link, as the interface sees it) and other generator expressions
    # name the target inside; a library linked both ways is reported once.
    list(TRANSFORM links REPLACE "^\\$<[A-Z_]+:([^>]+)>$" "\\1")
    list(REMOVE_DUPLICATES links)
    foreach(link IN LISTS links)
      if(NOT link MATCHES "^kiln_" OR link IN_LIST _kiln_layer_exempt)
        continue()
      endif()
      if(NOT link IN_LIST _kiln_may_link_${target})
        string(APPEND problems "\n  ${target} links ${link}, which its layer may not use "
               "(allowed: ${_kiln_may_link_${target}})")
      endif()
    endforeach()
  endforeach()
  if(problems)
    message(FATAL_ERROR "kiln: the layering is broken (docs/ARCHITECTURE.md):${problems}")
  endif()
endfunction()
