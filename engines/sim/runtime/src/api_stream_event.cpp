// Streams and events. Every operation completes before its call returns, so streams need no
// queue: they are handles to validate. Events carry a logical clock (runtime_state.h) that
// advances by one per launch or copy; cudaEventElapsedTime reports kMillisecondsPerTick per
// step, a consistent stand-in that never claims to be measured time (README.md).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "device_properties.h"
#include "error_state.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

namespace kiln::sim::runtime {
namespace {

constexpr float kMillisecondsPerTick = 0.001f;

// Stream priorities as on an H200: 0 (least) to -5 (greatest); others are clamped, as CUDA does.
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

int clamp_priority(int priority) { return std::clamp(priority, kGreatestPriority, kLeastPriority); }

cudaError_t create_stream(cudaStream_t* stream, unsigned flags, int priority) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (stream == nullptr) return fail(cudaErrorInvalidValue, "cudaStreamCreate: null pStream");
  auto record = std::make_unique<StreamRecord>();
  record->flags = flags;
  record->priority = clamp_priority(priority);
  *stream = reinterpret_cast<cudaStream_t>(record.get());
  state.streams[record.get()] = std::move(record);
  return cudaSuccess;
}

enum class PrintfFlush : bool { No, Yes };

// For calls that wait on a stream: the sticky error of a faulted launch surfaces here. A
// synchronization (not a query) prints the kernels' pending printf output, as CUDA does.
cudaError_t synchronize_stream(const char* api, cudaStream_t stream,
                               PrintfFlush flush = PrintfFlush::Yes) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (!state.is_valid_stream(stream))
    return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": no such stream");
  if (flush == PrintfFlush::Yes) state.flush_printf();
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, std::string(api) + ": an earlier launch faulted");
  return cudaSuccess;
}

EventRecord* find_event(RuntimeState& state, cudaEvent_t event) {
  auto it = state.events.find(event);
  return it == state.events.end() ? nullptr : it->second.get();
}

cudaError_t record_event(const char* api, cudaEvent_t event, cudaStream_t stream) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  EventRecord* record = find_event(state, event);
  if (record == nullptr)
    return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": no such event");
  if (!state.is_valid_stream(stream))
    return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": no such stream");
  record->recorded = true;
  record->tick = state.clock;
  return cudaSuccess;
}

// The checks the runtime documents for an access-policy window: a hit ratio in [0, 1], known
// properties (the miss property Normal or Streaming) and a size the device supports.
cudaError_t check_access_policy(const cudaAccessPolicyWindow& window) {
  const std::string api = "cudaStreamSetAttribute(AccessPolicyWindow): ";
  if (!(window.hitRatio >= 0.0f && window.hitRatio <= 1.0f))
    return fail(cudaErrorInvalidValue, api + "hitRatio must be in [0, 1]");
  if (window.hitProp < cudaAccessPropertyNormal || window.hitProp > cudaAccessPropertyPersisting)
    return fail(cudaErrorInvalidValue, api + "hitProp is not a cudaAccessProperty");
  if (window.missProp != cudaAccessPropertyNormal && window.missProp != cudaAccessPropertyStreaming)
    return fail(cudaErrorInvalidValue, api + "missProp must be Normal or Streaming");
  if (window.num_bytes > static_cast<size_t>(kMaxAccessPolicyWindowBytes))
    return fail(cudaErrorInvalidValue, api + "num_bytes " + std::to_string(window.num_bytes) +
                                           " exceeds accessPolicyMaxWindowSize (" +
                                           std::to_string(kMaxAccessPolicyWindowBytes) + ")");
  return cudaSuccess;
}

cudaError_t get_stream_attribute(cudaStream_t stream, cudaStreamAttrID attribute,
                                 cudaStreamAttrValue* value) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (value == nullptr) return fail(cudaErrorInvalidValue, "cudaStreamGetAttribute: null value");
  StreamRecord* record = state.stream_record(stream);
  if (record == nullptr)
    return fail(cudaErrorInvalidResourceHandle, "cudaStreamGetAttribute: no such stream");
  switch (attribute) {
    case cudaStreamAttributeAccessPolicyWindow:
      value->accessPolicyWindow = record->access_policy;
      return cudaSuccess;
    case cudaStreamAttributeSynchronizationPolicy:
      value->syncPolicy = record->sync_policy;
      return cudaSuccess;
    case cudaStreamAttributePriority:
      value->priority = record->priority;
      return cudaSuccess;
    default:
      return fail(cudaErrorInvalidValue, "cudaStreamGetAttribute: attribute " +
                                             std::to_string(static_cast<int>(attribute)) +
                                             " is not kept for streams by the simulator");
  }
}

cudaError_t set_stream_attribute(cudaStream_t stream, cudaStreamAttrID attribute,
                                 const cudaStreamAttrValue* value) {
  auto& state = RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (value == nullptr) return fail(cudaErrorInvalidValue, "cudaStreamSetAttribute: null value");
  StreamRecord* record = state.stream_record(stream);
  if (record == nullptr)
    return fail(cudaErrorInvalidResourceHandle, "cudaStreamSetAttribute: no such stream");
  switch (attribute) {
    case cudaStreamAttributeAccessPolicyWindow:
      if (const cudaError_t error = check_access_policy(value->accessPolicyWindow);
          error != cudaSuccess)
        return error;
      record->access_policy = value->accessPolicyWindow;
      return cudaSuccess;
    case cudaStreamAttributeSynchronizationPolicy:
      if (value->syncPolicy < cudaSyncPolicyAuto || value->syncPolicy > cudaSyncPolicyBlockingSync)
        return fail(cudaErrorInvalidValue,
                    "cudaStreamSetAttribute: not a cudaSynchronizationPolicy");
      record->sync_policy = value->syncPolicy;
      return cudaSuccess;
    case cudaStreamAttributePriority:
      record->priority = clamp_priority(value->priority);
      return cudaSuccess;
    default:
      return fail(cudaErrorInvalidValue, "cudaStreamSetAttribute: attribute " +
                                             std::to_string(static_cast<int>(attribute)) +
                                             " is not kept for streams by the simulator");
  }
}

}  // namespace
}  // namespace kiln::sim::runtime

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) { return rt::create_stream(pStream, 0, 0); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return rt::create_stream(pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return rt::create_stream(pStream, flags, priority);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (state.streams.erase(stream) == 0)
    return rt::fail(cudaErrorInvalidResourceHandle,
                    "cudaStreamDestroy: not a stream created with cudaStreamCreate (the default "
                    "stream cannot be destroyed)");
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return rt::synchronize_stream("cudaStreamSynchronize", stream);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return rt::synchronize_stream("cudaStreamSynchronize", stream);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return rt::synchronize_stream("cudaStreamQuery", stream, rt::PrintfFlush::No);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return rt::synchronize_stream("cudaStreamQuery", stream, rt::PrintfFlush::No);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int /*flags*/) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (!state.is_valid_stream(stream))
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: no such stream");
  if (rt::find_event(state, event) == nullptr)
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: no such event");
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return cudaStreamWaitEvent(stream, event, flags);
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (flags == nullptr || !state.is_valid_stream(hStream))
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaStreamGetFlags: no such stream");
  auto it = state.streams.find(hStream);
  *flags = it == state.streams.end() ? 0 : it->second->flags;
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  rt::StreamRecord* record = state.stream_record(hStream);
  if (priority == nullptr || record == nullptr)
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaStreamGetPriority: no such stream");
  *priority = record->priority;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  if (leastPriority != nullptr) *leastPriority = rt::kLeastPriority;
  if (greatestPriority != nullptr) *greatestPriority = rt::kGreatestPriority;
  return cudaSuccess;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value_out) {
  return rt::get_stream_attribute(hStream, attr, value_out);
}

cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
                                        cudaStreamAttrValue* value_out) {
  return rt::get_stream_attribute(hStream, attr, value_out);
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value) {
  return rt::set_stream_attribute(hStream, attr, value);
}

cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
                                        const cudaStreamAttrValue* value) {
  return rt::set_stream_attribute(hStream, attr, value);
}

// Host functions run at once: everything enqueued before them has already completed.
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  const cudaError_t error = rt::synchronize_stream("cudaLaunchHostFunc", stream);
  if (error == cudaSuccess && fn != nullptr) fn(userData);
  return error;
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned int /*flags*/) {
  const cudaError_t error = rt::synchronize_stream("cudaStreamAddCallback", stream);
  if (callback != nullptr) callback(stream, error, userData);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  return rt::synchronize_stream("cudaDeviceSynchronize", nullptr);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (event == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaEventCreate: null event");
  auto record = std::make_unique<rt::EventRecord>();
  record->flags = flags;
  *event = reinterpret_cast<cudaEvent_t>(record.get());
  state.events[record.get()] = std::move(record);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (state.events.erase(event) == 0)
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: no such event");
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return rt::record_event("cudaEventRecord", event, stream);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return rt::record_event("cudaEventRecord", event, stream);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                     unsigned int /*flags*/) {
  return rt::record_event("cudaEventRecordWithFlags", event, stream);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (rt::find_event(state, event) == nullptr)
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaEventQuery: no such event");
  return rt::sticky_error();
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  const cudaError_t error = cudaEventQuery(event);
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.flush_printf();
  return error;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  if (ms == nullptr) return rt::fail(cudaErrorInvalidValue, "cudaEventElapsedTime: null ms");
  rt::EventRecord* first = rt::find_event(state, start);
  rt::EventRecord* last = rt::find_event(state, end);
  if (first == nullptr || last == nullptr)
    return rt::fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: no such event");
  if ((first->flags & cudaEventDisableTiming) != 0 || (last->flags & cudaEventDisableTiming) != 0)
    return rt::fail(cudaErrorInvalidResourceHandle,
                    "cudaEventElapsedTime: an event was created with cudaEventDisableTiming");
  if (!first->recorded || !last->recorded)
    return rt::fail(cudaErrorInvalidResourceHandle,
                    "cudaEventElapsedTime: an event was never recorded (call cudaEventRecord)");
  const double ticks = static_cast<double>(last->tick) - static_cast<double>(first->tick);
  *ms = static_cast<float>(ticks) * rt::kMillisecondsPerTick;
  return cudaSuccess;
}

}  // extern "C"
