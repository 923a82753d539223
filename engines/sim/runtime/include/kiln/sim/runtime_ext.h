/*
 * kiln/sim/runtime_ext.h -- what the simulated CUDA runtime (libkiln_cudart_sim.so) exports
 * beyond the CUDA API, for the driver that runs a candidate on the simulator (kiln-sim-run).
 *
 * Returned strings are JSON, owned by the library and valid until the next call of the same
 * function on the same thread.
 */
#ifndef KILN_SIM_RUNTIME_EXT_H
#define KILN_SIM_RUNTIME_EXT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The faults of the last launch that faulted: a JSON array of {kind, message, block, thread,
 * address, ptx_line, source, instruction}; "[]" when none has. */
const char* kiln_sim_last_faults(void);

/* Everything recorded since the last kiln_sim_clear_report:
 * {"launches": [{kernel, grid, block, cluster, dynamic_shared_bytes, stats, faults?,
 *                printf_bytes?, printf_dropped_bytes?}],
 *  "last_faults": [...], "diagnostics": ["cudaErrorInvalidValue: what was wrong ..."],
 *  "printf_output": "what the kernels printed (device printf), up to 1 MiB",
 *  "printf_dropped_bytes": bytes printed but not in printf_output} */
const char* kiln_sim_report(void);

/* Forgets launches, faults, diagnostics and printf output (not memory, the sticky error, or
 * printf output not yet written to stdout). */
void kiln_sim_clear_report(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_SIM_RUNTIME_EXT_H */
