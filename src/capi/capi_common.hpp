// The C interface's one rule for errors (include/fieldft/fieldft.h): every entry point runs its
// body inside guard(), which turns any exception into a status code and the thread-local message
// that fieldft_last_error() returns. No exception crosses the C boundary.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "fieldft/context.hpp"
#include "fieldft/error.hpp"
#include "fieldft/fieldft.h"

namespace fieldft::capi {

// Records `message` (or "<who>: <what>") as this thread's last error and returns `status`; never
// throws (without memory for the message, the message is left empty).
int fail(int status, const std::string& message) noexcept;
int fail(int status, const char* who, const char* what) noexcept;

// Runs body(); FIELDFT_OK, or the status of what it threw (its message prefixed with `who`).
template <class Body>
int guard(const char* who, Body&& body) noexcept {
  try {
    body();
    return FIELDFT_OK;
  } catch (const Error& e) {
    return fail(static_cast<int>(e.code()), who, e.what());
  } catch (const std::bad_alloc&) {
    return fail(FIELDFT_ERR_OUT_OF_MEMORY, who, "out of memory");
  } catch (const std::exception& e) {
    return fail(FIELDFT_ERR_INTERNAL, who, e.what());
  } catch (...) {
    return fail(FIELDFT_ERR_INTERNAL, who, "unexpected exception");
  }
}

// Throws kInvalidArgument "<what> is NULL" when p is null.
inline void require_pointer(const void* p, const char* what) {
  require(p != nullptr, ErrorCode::kInvalidArgument, std::string(what) + " is NULL");
}

// The Context a place describes (NULL: fieldft_place_default): Context::from_options with a
// borrowed stream (NULL = the legacy default stream).
Context context_of(const fieldft_place* place);

}  // namespace fieldft::capi
