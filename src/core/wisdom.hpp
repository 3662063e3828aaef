// Wisdom: NUFFT configurations measured once per problem signature and device (planning
// kMeasure, include/fieldft/nufft.hpp), kept in a JSON file as FFTW keeps its wisdom. Host only:
// the signature, the entries, reading, merging and writing the file. The measuring itself is the
// transform layer's (src/plan.cpp). The file format and the rules are in docs/tuning.md,
// "Measured planning and wisdom".
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "fieldft/nufft.hpp"

namespace fieldft::core {

// Part of every signature: raise it when the planner's rules or the candidate set change, so that
// older entries stop matching (they stay in the file, unused).
inline constexpr int kWisdomVersion = 1;

// The problem signature of a type 1 or 2 plan: everything the timings depend on, as one string
// (equal strings, same problem). isign is left out (it changes no cost); M is rounded to the
// nearest power of two (timings change smoothly with M, and a reconstruction's frames differ by
// a few points). `device`: "cpu N threads" or the CUDA device's name and compute capability
// (wisdom_device). precision_bytes: sizeof(T).
std::string wisdom_signature(const nufft::PlanInfo& info, const nufft::Options& options, const std::string& device,
                             int precision_bytes, std::int64_t m);
// The device part of a signature: "cpu N threads" or "cuda NAME sm_XY".
std::string wisdom_device(const nufft::Options& options, int nthreads);

// One measured winner. The configuration is stored as options (0: the planner's automatic
// choice), so applying it is planning with those options.
struct WisdomEntry {
  nufft::Method method = nufft::Method::kAuto;
  double upsampfac = 0;
  std::array<int, 3> bin_size{0, 0, 0};
  double seconds = 0;          // the winner's measured cost (see PlanInfo::MeasuredCandidate)
  double planner_seconds = 0;  // the same for the planner's estimate
  std::string runner_up;       // the second fastest candidate, described ("" where alone)
  int candidates = 0;          // how many were timed
  bool operator==(const WisdomEntry&) const = default;
};
using Wisdom = std::map<std::string, WisdomEntry>;  // signature -> entry

// "nupts sigma 2 bins 0x0x0": a configuration in words.
std::string describe_config(nufft::Method method, double upsampfac, const std::array<int, 3>& bin_size);

// The file's text, and back. wisdom_from_json returns nullopt (with *error set) for text that
// is not a fieldft wisdom file; entries it cannot read (unknown method, wrong field types) are
// skipped.
std::string wisdom_to_json(const Wisdom& wisdom);
std::optional<Wisdom> wisdom_from_json(const std::string& text, std::string* error = nullptr);

// Reads `path`: a missing file is an empty wisdom; an unreadable or corrupt one is an empty
// wisdom with *problem set (the caller measures and later replaces the file).
Wisdom read_wisdom(const std::string& path, std::string* problem = nullptr);

// Throws kInvalidArgument (naming the path and the system's reason) where the lock file
// path + ".lock" cannot be created or opened: the check made before measuring.
void check_wisdom_writable(const std::string& path);

// Adds or replaces one entry: locks path + ".lock" (flock, exclusive), reads the file again,
// merges, writes a temporary file in the same directory and renames it over the file, so
// concurrent writers (threads or processes) keep each other's entries and readers never see a
// partial file. Throws kInvalidArgument where the file cannot be written.
void store_wisdom(const std::string& path, const std::string& signature, const WisdomEntry& entry);

// The wisdom file of `options`: Options::wisdom_path, else $FIELDFT_WISDOM, else "".
std::string wisdom_path(const nufft::Options& options);

// Wisdom kept in this process (planning measure without a file).
std::optional<WisdomEntry> process_wisdom(const std::string& signature);
void remember_wisdom(const std::string& signature, const WisdomEntry& entry);

}  // namespace fieldft::core
