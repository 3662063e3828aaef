// `fieldft info`: what this build contains and which devices it sees.
#include <algorithm>
#include <iostream>
#include <memory>

#include "common.hpp"

namespace fieldft::cli {

namespace {

struct InfoArgs {
  bool json = false;
};

int run_info(const InfoArgs& args) {
  const BuildInfo b = build_info();
  const std::vector<DeviceInfo> gpus = cuda_devices();
  // Compiled in is not usable: a CUDA build on a machine without a visible device (or driver)
  // can only run on the CPU, and --backend auto picks the CPU there.
  std::vector<std::string> backends{backend_name(Backend::kCpu)};
  if (b.cuda) backends.emplace_back(backend_name(Backend::kCuda));
  std::vector<std::string> usable{backend_name(Backend::kCpu)};
  if (b.cuda && !gpus.empty()) usable.emplace_back(backend_name(Backend::kCuda));

  if (args.json) {
    nlohmann::json j;
    j["version"] = b.version;
    j["build"] = {{"build_type", b.build_type},
                  {"compiler", b.compiler},
                  {"fftw", b.fftw_version},
                  {"cuda", b.cuda},
                  {"cuda_architectures", b.cuda_architectures}};
    j["backends"] = backends;           // compiled in
    j["usable_backends"] = usable;      // compiled in and with a device
    j["auto_backend"] = usable.back();  // what --backend auto runs on
    j["cpu_threads"] = b.cpu_threads;
    j["gpus"] = nlohmann::json::array();
    for (const auto& d : gpus)
      j["gpus"].push_back(
          {{"id", d.id},
           {"name", d.name},
           {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
           {"total_memory_bytes", d.total_memory},
           {"free_memory_bytes", d.free_memory},
           {"multiprocessors", d.multiprocessors}});
    print_json(j);
    return kExitOk;
  }

  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::cout << "fieldft " << b.version << "\n"
            << "build:        " << b.build_type << ", " << b.compiler << "\n"
            << "FFTW:         " << b.fftw_version << "\n"
            << "CUDA backend: "
            << (b.cuda ? "compiled in (architectures " + b.cuda_architectures + ")"
                       : std::string("not compiled in"))
            << "\n"
            << "backends:     ";
  for (std::size_t i = 0; i < backends.size(); ++i) {
    std::cout << (i ? ", " : "") << backends[i];
    if (std::find(usable.begin(), usable.end(), backends[i]) == usable.end())
      std::cout << " (compiled in, no device)";
  }
  std::cout << "; --backend auto uses " << usable.back();
  std::cout << "\nCPU threads:  " << b.cpu_threads << "\nGPUs:         " << gpus.size() << "\n";
  for (const auto& d : gpus)
    std::cout << "  [" << d.id << "] " << d.name << ", compute capability " << d.cc_major << "."
              << d.cc_minor << ", " << d.multiprocessors << " SMs, "
              << static_cast<double>(d.total_memory) / kGiB << " GiB ("
              << static_cast<double>(d.free_memory) / kGiB << " GiB free)\n";
  return kExitOk;
}

}  // namespace

Subcommand add_info_command(CLI::App& parent) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* app = parent.add_subcommand(
      "info", "Version, build options, backends (compiled in and usable), CPU threads and GPUs seen");
  app->add_flag("--json", args->json, "Print one JSON object (one line) instead of text");
  return {app, [args] { return run_info(*args); }, /*memory_advice=*/""};
}

}  // namespace fieldft::cli
