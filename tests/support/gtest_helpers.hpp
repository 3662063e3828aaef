// GoogleTest helpers shared by the test folders: skipping on an unavailable backend, and
// checking that a call fails with the right fieldft::ErrorCode and a message that names the
// problem.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <typeinfo>

#include "fieldft/error.hpp"
#include "support/backends.hpp"

// Skips the current test (from the test body or SetUp) when the backend cannot run here.
#define FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(backend)                                    \
  do {                                                                                 \
    const std::string fieldft_test_reason_ = ::fieldft::test::backend_unavailable_reason(backend); \
    if (!fieldft_test_reason_.empty()) GTEST_SKIP() << fieldft_test_reason_;           \
  } while (0)

namespace fieldft::test {

inline bool contains_ignoring_case(std::string_view text, std::string_view word) {
  auto lower = [](std::string_view s) {
    std::string r(s);
    std::transform(r.begin(), r.end(), r.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return r;
  };
  return lower(text).find(lower(word)) != std::string::npos;
}

// Success when f() throws fieldft::Error with the given code and a message that contains every
// word in must_mention (case-insensitive). Use as EXPECT_TRUE(throws_error(...)).
template <class F>
::testing::AssertionResult throws_error(F&& f, ErrorCode code,
                                        std::initializer_list<std::string_view> must_mention = {}) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() != code)
      return ::testing::AssertionFailure()
             << "threw code " << error_code_name(e.code()) << " (" << static_cast<int>(e.code())
             << "), expected " << error_code_name(code) << " (" << static_cast<int>(code)
             << "); message: \"" << e.what() << "\"";
    const std::string msg = e.what();
    if (msg.empty()) return ::testing::AssertionFailure() << "error message is empty";
    for (auto w : must_mention)
      if (!contains_ignoring_case(msg, w))
        return ::testing::AssertionFailure()
               << "message \"" << msg << "\" does not mention \"" << w << "\"";
    return ::testing::AssertionSuccess() << "message: \"" << msg << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "threw a non-fieldft exception (" << typeid(e).name() << "): " << e.what()
           << "; expected fieldft::Error with code " << error_code_name(code);
  } catch (...) {
    return ::testing::AssertionFailure() << "threw something that is not a std::exception";
  }
  return ::testing::AssertionFailure()
         << "did not throw; expected fieldft::Error with code " << error_code_name(code);
}

}  // namespace fieldft::test
