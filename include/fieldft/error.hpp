// fieldft errors: one exception type inside C++, one code per kind of failure.
//
// Every error says what was wrong and what was expected. The same codes cross the C boundary
// (fieldft_strerror) and become Python exceptions, so the enumerators are never renumbered.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fieldft {

enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // an option or argument outside its documented range
  kNonFinite = 2,           // NaN or Inf in coordinates, times or field maps
  kShapeMismatch = 3,       // sizes of arrays that must agree do not
  kEpsTooSmall = 4,         // requested tolerance below what the precision can deliver
  kTooLarge = 5,            // sizes overflow 64-bit indexing or exceed the memory available
  kOutOfMemory = 6,         // an allocation failed
  kBackendUnavailable = 7,  // the requested backend is not compiled in or has no device
  kNotImplemented = 8,      // a combination that this version does not provide
  kCuda = 9,                // a CUDA runtime or cuFFT call failed
  kInvalidState = 10,       // e.g. execute before set_points
  kInternal = 11,           // a bug in fieldft
  kContextMismatch = 12,    // operands in different places (host / device / stream)
};

// The short name of a code, e.g. "invalid argument".
const char* error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// Throws Error(code, message) when cond is false.
inline void require(bool cond, ErrorCode code, const std::string& message) {
  if (!cond) throw Error(code, message);
}

// The same with the message made only on failure: for checks inside loops over data, where
// building a string per element costs more than the loop (537M map values: 33 s).
template <class MakeMessage>
requires std::is_invocable_r_v<std::string, MakeMessage>
inline void require(bool cond, ErrorCode code, MakeMessage&& message) {
  if (!cond) throw Error(code, message());
}

}  // namespace fieldft
