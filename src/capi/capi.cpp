// fieldft.h: status codes, messages, build facts, places.
#include <cstring>
#include <string>

#include "capi/capi_common.hpp"
#include "fieldft/config.hpp"
#include "fieldft/runtime.hpp"

namespace fieldft::capi {

static_assert(FIELDFT_ERR_INVALID_ARGUMENT == static_cast<int>(ErrorCode::kInvalidArgument));
static_assert(FIELDFT_ERR_NON_FINITE == static_cast<int>(ErrorCode::kNonFinite));
static_assert(FIELDFT_ERR_SHAPE_MISMATCH == static_cast<int>(ErrorCode::kShapeMismatch));
static_assert(FIELDFT_ERR_EPS_TOO_SMALL == static_cast<int>(ErrorCode::kEpsTooSmall));
static_assert(FIELDFT_ERR_TOO_LARGE == static_cast<int>(ErrorCode::kTooLarge));
static_assert(FIELDFT_ERR_OUT_OF_MEMORY == static_cast<int>(ErrorCode::kOutOfMemory));
static_assert(FIELDFT_ERR_BACKEND_UNAVAILABLE == static_cast<int>(ErrorCode::kBackendUnavailable));
static_assert(FIELDFT_ERR_NOT_IMPLEMENTED == static_cast<int>(ErrorCode::kNotImplemented));
static_assert(FIELDFT_ERR_CUDA == static_cast<int>(ErrorCode::kCuda));
static_assert(FIELDFT_ERR_INVALID_STATE == static_cast<int>(ErrorCode::kInvalidState));
static_assert(FIELDFT_ERR_INTERNAL == static_cast<int>(ErrorCode::kInternal));
static_assert(FIELDFT_ERR_CONTEXT_MISMATCH == static_cast<int>(ErrorCode::kContextMismatch));

namespace {
thread_local std::string last_error;
}

int fail(int status, const std::string& message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();  // no memory for the message: the status still says what happened
  }
  return status;
}

int fail(int status, const char* who, const char* what) noexcept {
  try {
    last_error.assign(who).append(": ").append(what);
  } catch (...) {
    last_error.clear();
  }
  return status;
}

Context context_of(const fieldft_place* place) {
  fieldft_place p;
  fieldft_place_default(&p);
  if (place) p = *place;
  require(p.backend >= FIELDFT_BACKEND_AUTO && p.backend <= FIELDFT_BACKEND_CUDA, ErrorCode::kInvalidArgument,
          "place.backend is " + std::to_string(p.backend) +
              ", expected FIELDFT_BACKEND_AUTO (0), FIELDFT_BACKEND_CPU (1) or FIELDFT_BACKEND_CUDA (2)");
  require(p.device >= 0, ErrorCode::kInvalidArgument,
          "place.device is " + std::to_string(p.device) + ", expected a CUDA device ordinal >= 0");
  return Context::from_options(static_cast<Backend>(p.backend), p.device, p.stream, p.nthreads,
                               /*own_stream=*/false);
}

}  // namespace fieldft::capi

extern "C" {

const char* fieldft_strerror(int status) {
  if (status < FIELDFT_OK || status > FIELDFT_ERR_CONTEXT_MISMATCH) return "unknown status";
  return fieldft::error_code_name(static_cast<fieldft::ErrorCode>(status));
}

const char* fieldft_last_error(void) { return fieldft::capi::last_error.c_str(); }

const char* fieldft_version(void) { return FIELDFT_VERSION_STRING; }

int fieldft_cuda_device_count(void) { return static_cast<int>(fieldft::cuda_devices().size()); }

void fieldft_place_default(fieldft_place* place) {
  if (!place) return;
  place->backend = FIELDFT_BACKEND_AUTO;
  place->device = 0;
  place->stream = nullptr;
  place->nthreads = 0;
}

}  // extern "C"
