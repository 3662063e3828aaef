// dist::split: contiguous balanced shares (include/fieldft/dist.hpp).
#include <string>

#include "fieldft/dist.hpp"

namespace fieldft::dist {

Share split(std::int64_t count, int parts, int index) {
  require(count >= 0, ErrorCode::kInvalidArgument,
          "dist::split: count " + std::to_string(count) + " (expected >= 0)");
  require(parts >= 1, ErrorCode::kInvalidArgument,
          "dist::split: parts " + std::to_string(parts) + " (expected >= 1)");
  require(index >= 0 && index < parts, ErrorCode::kInvalidArgument,
          "dist::split: index " + std::to_string(index) + " outside [0, " + std::to_string(parts) + ")");
  const std::int64_t base = count / parts, extra = count % parts;
  // The first `extra` parts hold base + 1 items each.
  const std::int64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

}  // namespace fieldft::dist
