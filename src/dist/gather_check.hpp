// What every Communicator::gather_pieces checks on its root (include/fieldft/dist.hpp): the
// pieces the ranks send against the ranges root receives them in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fieldft::dist::detail {

// sizes[r]: rank r's piece sizes in bytes. Empty when `into` holds exactly those pieces in rank
// order, else what differs (the first difference).
inline std::string gather_mismatch(const std::vector<std::vector<std::uint64_t>>& sizes,
                                   std::span<const std::span<std::byte>> into) {
  std::size_t total = 0;
  for (const auto& s : sizes) total += s.size();
  if (total != into.size())
    return "the ranks send " + std::to_string(total) + " pieces; the root has " + std::to_string(into.size()) +
           " ranges for them";
  std::size_t i = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r)
    for (std::size_t p = 0; p < sizes[r].size(); ++p, ++i)
      if (sizes[r][p] != into[i].size() || (into[i].data() == nullptr && sizes[r][p] > 0))
        return "rank " + std::to_string(r) + "'s piece " + std::to_string(p) + " has " + std::to_string(sizes[r][p]) +
               " bytes; the root's range for it " + std::to_string(into[i].size());
  return {};
}

}  // namespace fieldft::dist::detail
