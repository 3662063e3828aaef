#include "recon_dist.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "common.hpp"

namespace fieldft::cli {

std::vector<int> parse_devices(const std::string& text, int visible) {
  std::vector<int> out;
  if (text == "all") {
    if (visible < 1) throw Error(ErrorCode::kBackendUnavailable, "--devices all: no CUDA device is visible");
    for (int i = 0; i < visible; ++i) out.push_back(i);
    return out;
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0)
      throw UsageError("--devices: '" + text + "' is not a list of device ordinals (e.g. 0,1) or 'all'");
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError("--devices: device " + std::to_string(v) + " is named twice");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("--devices: empty list (e.g. 0,1 or all)");
  for (int v : out)
    if (v >= visible)
      throw Error(ErrorCode::kBackendUnavailable,
                  "--devices: device " + std::to_string(v) + " is out of range, " + std::to_string(visible) +
                      " CUDA device" + (visible == 1 ? " is" : "s are") + " visible");
  return out;
}

const char* split_name(Split s) {
  switch (s) {
    case Split::kProblems:
      return "problems";
    case Split::kCoils:
      return "coils";
    default:
      return "none";
  }
}

SplitChoice choose_split(const std::string& asked, int places, std::int64_t slices, const std::string& not_stack,
                         std::int64_t coils, const std::string& place_word) {
  const std::string k = std::to_string(places) + " " + place_word;
  const auto coil_split = [&](const std::string& why) {
    if (coils < places)
      throw Error(ErrorCode::kInvalidArgument, "--split coils: " + std::to_string(coils) + " coil" +
                                                   (coils == 1 ? "" : "s") + " cannot be shared by " + k +
                                                   " (each needs at least one); use fewer");
    return SplitChoice{Split::kCoils, why};
  };
  if (asked == "problems") {
    if (slices == 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "--split problems: the data are not a stack of independent 2D problems (" + not_stack + ")");
    return {Split::kProblems, "asked for"};
  }
  if (asked == "coils") return coil_split("asked for");
  if (slices >= places)
    return {Split::kProblems, "the data are a stack of " + std::to_string(slices) + " independent slices, at least one per " +
                                  place_word.substr(0, place_word.size() - 1) + " (" + k + ")"};
  if (slices > 0)
    return coil_split("the stack's " + std::to_string(slices) + " slices are fewer than the " + k +
                      ": the coils of the whole problem are shared instead");
  return coil_split("one problem (" + not_stack + "): its " + std::to_string(coils) + " coils are shared by the " + k);
}

void Agreement::checkpoint() {
  if (!active()) return;
  try {
    dist::agree_on_errors(comm_, [] {});
  } catch (const Error& e) {
    finished_ = true;
    throw AgreedError(e.code(), e.what());
  }
}

void Agreement::fail(std::exception_ptr e) {
  if (!active()) std::rethrow_exception(e);
  try {
    dist::agree_on_errors(comm_, [&] {
      try {
        std::rethrow_exception(e);
      } catch (const UsageError& u) {  // a library error code for the others' exit status
        throw Error(ErrorCode::kInvalidArgument, u.what());
      }
    });
  } catch (const Error& x) {
    finished_ = true;
    throw AgreedError(x.code(), x.what());
  }
  std::rethrow_exception(e);  // unreachable: the phase threw
}

int run_agreed(Agreement& agreement, const std::function<int()>& body) {
  const bool root = !agreement.comm() || agreement.comm()->rank() == 0;
  try {
    try {
      return body();
    } catch (const AgreedError&) {
      throw;
    } catch (...) {
      if (!agreement.active()) throw;
      agreement.fail(std::current_exception());
    }
  } catch (const AgreedError& e) {
    if (root) throw Error(e.code(), e.what());
    return e.code() == ErrorCode::kInternal ? kExitInternal : kExitLibraryBase + static_cast<int>(e.code());
  }
}

}  // namespace fieldft::cli
