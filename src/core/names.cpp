// Names of enumerations and error codes, and their parsing.
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNonFinite: return "non-finite value";
    case ErrorCode::kShapeMismatch: return "shape mismatch";
    case ErrorCode::kEpsTooSmall: return "eps too small";
    case ErrorCode::kTooLarge: return "problem too large";
    case ErrorCode::kOutOfMemory: return "out of memory";
    case ErrorCode::kBackendUnavailable: return "backend unavailable";
    case ErrorCode::kNotImplemented: return "not implemented";
    case ErrorCode::kCuda: return "CUDA error";
    case ErrorCode::kInvalidState: return "invalid state";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kContextMismatch: return "context mismatch";
  }
  return "unknown error";
}

const char* backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::kAuto: return "auto";
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
  }
  return "unknown";
}

Backend parse_backend(const std::string& name) {
  for (Backend b : {Backend::kAuto, Backend::kCpu, Backend::kCuda})
    if (name == backend_name(b)) return b;
  throw Error(ErrorCode::kInvalidArgument, "unknown backend '" + name + "'; expected auto, cpu or cuda");
}

namespace nufft {

const char* method_name(Method m) noexcept {
  switch (m) {
    case Method::kAuto: return "auto";
    case Method::kNuptsDriven: return "nupts";
    case Method::kSubproblem: return "subproblem";
    case Method::kOutputDriven: return "output";
    case Method::kPrecomputed: return "precomputed";
  }
  return "unknown";
}

const char* spread_kernel_name(SpreadKernel k) noexcept {
  switch (k) {
    case SpreadKernel::kNone: return "none";
    case SpreadKernel::kNupts: return "nupts";
    case SpreadKernel::kSubproblem: return "subproblem";
    case SpreadKernel::kTile: return "tile";
    case SpreadKernel::kTileFixed: return "tile-fixed";
    case SpreadKernel::kTileFixedBulk: return "tile-fixed-bulk";
    case SpreadKernel::kTileBoxes: return "tile-boxes";
    case SpreadKernel::kTileBoxesFixed: return "tile-boxes-fixed";
    case SpreadKernel::kTensorCore: return "tensor-core";
    case SpreadKernel::kTensorCoreBulk: return "tensor-core-bulk";
  }
  return "unknown";
}

const char* interp_kernel_name(InterpKernel k) noexcept {
  switch (k) {
    case InterpKernel::kNone: return "none";
    case InterpKernel::kNupts: return "nupts";
    case InterpKernel::kTile: return "tile";
  }
  return "unknown";
}

const char* fft_strategy_name(FftStrategy f) noexcept {
  switch (f) {
    case FftStrategy::kNone: return "none";
    case FftStrategy::kWhole: return "whole";
    case FftStrategy::kPruned: return "pruned";
  }
  return "unknown";
}

Method parse_method(const std::string& name) {
  for (Method m : {Method::kAuto, Method::kNuptsDriven, Method::kSubproblem, Method::kOutputDriven,
                   Method::kPrecomputed})
    if (name == method_name(m)) return m;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown method '" + name + "'; expected auto, nupts, subproblem, output or precomputed");
}

const char* planning_name(Planning p) noexcept {
  switch (p) {
    case Planning::kEstimate: return "estimate";
    case Planning::kMeasure: return "measure";
    case Planning::kRemeasure: return "remeasure";
  }
  return "unknown";
}

Planning parse_planning(const std::string& name) {
  for (Planning p : {Planning::kEstimate, Planning::kMeasure, Planning::kRemeasure})
    if (name == planning_name(p)) return p;
  throw Error(ErrorCode::kInvalidArgument, "unknown planning '" + name + "'; expected estimate, measure or remeasure");
}

}  // namespace nufft
}  // namespace fieldft
