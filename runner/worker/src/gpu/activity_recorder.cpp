#include "activity_recorder.h"

#include <cupti.h>

#include <cstdlib>
#include <map>
#include <string>

#include "kiln/compiler/demangle.h"

namespace kiln::worker {

namespace {

ActivityRecorder* g_recorder = nullptr;  // see the header: CUPTI's callbacks carry no user pointer
constexpr size_t kBufferBytes = size_t{8} << 20;

std::string cupti_error(CUptiResult result, const char* what) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string(what) + " failed: " + (text != nullptr ? text : "unknown CUPTI error");
}

const std::string& api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  static std::mutex mutex;
  static std::map<std::pair<int, uint32_t>, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(static_cast<int>(domain), static_cast<uint32_t>(cbid));
  auto it = names.find(key);
  if (it != names.end()) return it->second;
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) name = "";
  return names.emplace(key, name).first->second;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<ActivityRecord> out;
  CUpti_Activity* record = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ActivityRecord r;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        r.kind = ActivityRecord::Kind::kKernel;
        r.start = k->start;
        r.end = k->end;
        r.stream_id = k->streamId;
        r.name = compiler::demangle(k->name != nullptr ? k->name : "");
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        r.kind = ActivityRecord::Kind::kMemcpy;
        r.start = m->start;
        r.end = m->end;
        r.stream_id = m->streamId;
        r.name = "memcpy of " + std::to_string(m->bytes) + " bytes";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        r.kind = ActivityRecord::Kind::kMemset;
        r.start = m->start;
        r.end = m->end;
        r.stream_id = m->streamId;
        r.name = "memset of " + std::to_string(m->bytes) + " bytes";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
        const bool device = m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
                            m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
        const bool allocation =
            m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        const bool release = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        if (!device || (!allocation && !release)) continue;
        r.kind = ActivityRecord::Kind::kMemory;
        r.start = r.end = m->timestamp;
        r.bytes = (allocation ? 1 : -1) * static_cast<int64_t>(m->bytes);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        r.kind = runtime ? ActivityRecord::Kind::kRuntimeApi : ActivityRecord::Kind::kDriverApi;
        r.start = a->start;
        r.end = a->end;
        r.thread_id = a->threadId;
        r.name =
            api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
        break;
      }
      default:
        continue;
    }
    out.push_back(std::move(r));
  }
  std::free(buffer);
  if (g_recorder != nullptr && !out.empty()) g_recorder->add(std::move(out));
}

}  // namespace

ActivityRecorder::~ActivityRecorder() {
  if (running_) {
    cuptiActivityFlushAll(0);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  if (g_recorder == this) g_recorder = nullptr;
}

namespace {
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};
}  // namespace

Status ActivityRecorder::start() {
  if (g_recorder != nullptr && g_recorder != this)
    return make_error("a CUPTI activity recorder is already running");
  g_recorder = this;
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return make_error(cupti_error(r, "cuptiActivityRegisterCallbacks"));
  for (CUpti_ActivityKind kind : kKinds) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) return make_error(cupti_error(r, "cuptiActivityEnable"));
  }
  // Allocation records feed the device_memory gate; without them that gate is not run.
  memory_ = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS;
  running_ = true;
  return Ok{};
}

void ActivityRecorder::keep_enabled() {
  if (!running_) return;
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityEnable(kind);
  if (memory_) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
}

std::vector<ActivityRecord> ActivityRecorder::drain() {
  if (running_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ActivityRecord> out;
  out.swap(records_);
  return out;
}

uint64_t ActivityRecorder::now() const {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

Result<uint32_t> ActivityRecorder::stream_id(cudaStream_t stream) const {
  uint32_t id = 0;
  const CUptiResult r = cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream), 0, &id);
  if (r != CUPTI_SUCCESS) return make_error(cupti_error(r, "cuptiGetStreamIdEx"));
  return id;
}

uint64_t ActivityRecorder::dropped() const {
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  return dropped;
}

void ActivityRecorder::add(std::vector<ActivityRecord>&& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.insert(records_.end(), std::make_move_iterator(records.begin()),
                  std::make_move_iterator(records.end()));
}

}  // namespace kiln::worker
