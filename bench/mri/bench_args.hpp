// The command line of the bench/mri programs: positional numbers and a `--cuda` flag anywhere.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fieldft::bench {

struct BenchArgs {
  std::vector<std::string> positional;
  bool cuda = false;  // --cuda: run on cuda:0

  BenchArgs(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--cuda") == 0) cuda = true;
      else positional.emplace_back(argv[i]);
    }
  }
  // Positional argument i as an integer, or def when absent.
  long long integer(std::size_t i, long long def) const {
    return positional.size() > i ? std::atoll(positional[i].c_str()) : def;
  }
};

}  // namespace fieldft::bench
