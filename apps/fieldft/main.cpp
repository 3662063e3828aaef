// fieldft: command-line front end of the library. Parses, calls the library, reports.
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include "common.hpp"

namespace {

// The exit codes, with the library's own names for its error codes so the list cannot drift.
std::string exit_codes_text() {
  using fieldft::ErrorCode;
  std::string s =
      "Exit status: 0 success; 1 unexpected internal error; 2 malformed command line;\n"
      "10 + code for a library error:";
  for (int c = static_cast<int>(ErrorCode::kInvalidArgument);
       c <= static_cast<int>(ErrorCode::kContextMismatch); ++c)
    s += (c > 1 ? ", " : " ") + std::to_string(fieldft::cli::kExitLibraryBase + c) + " " +
         fieldft::error_code_name(static_cast<ErrorCode>(c));
  return s + ".";
}

int run(int argc, char** argv) {
  using namespace fieldft::cli;
  CLI::App app{"fieldft: non-uniform FFTs (NUFFT) and MRI reconstruction on GPUs and CPUs",
               "fieldft"};
  app.set_version_flag("--version", fieldft::build_info().version);
  app.require_subcommand(1);
  app.footer(exit_codes_text());

  const Subcommand commands[] = {add_info_command(app), add_nufft_command(app),
                                 add_demo_command(app), add_dft_command(app),
                                 add_simulate_command(app), add_recon_command(app),
                                 add_tune_command(app)};
  // After the subcommands, which copied the exit codes into their own footers.
  app.footer(exit_codes_text() + "\nRun 'fieldft SUBCOMMAND --help' for a subcommand's options.");
  const auto usage_error = [&](const std::string& what) {
    std::cerr << "fieldft: error: " << what << "\nRun 'fieldft"
              << (app.get_subcommands().empty() ? "" : " " + app.get_subcommands()[0]->get_name())
              << " --help' for usage.\n";
    return kExitUsage;
  };
  try {
    app.parse(argc, argv);
    for (const auto& c : commands) {
      if (!c.app->parsed()) continue;
      // Here rather than in main: the advice names the options of the subcommand that ran.
      const std::string advice = c.memory_advice.empty() ? "" : " (" + c.memory_advice + ")";
      try {
        return c.run();
      } catch (const std::bad_alloc&) {
        std::cerr << "fieldft: error: out of memory" << advice << '\n';
        return kExitLibraryBase + static_cast<int>(fieldft::ErrorCode::kOutOfMemory);
      } catch (const std::length_error&) {
        std::cerr << "fieldft: error: the problem is too large for this machine's address space"
                  << advice << '\n';
        return kExitLibraryBase + static_cast<int>(fieldft::ErrorCode::kTooLarge);
      }
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 reports a mistyped subcommand as a missing one ("A subcommand is required").
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string known;
      for (const auto& c : commands) known += (known.empty() ? "" : ", ") + c.app->get_name();
      return usage_error("'" + std::string(argv[1]) +
                         "' is not a known subcommand; the subcommands are: " + known);
    }
    return usage_error(e.what());
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  return kExitUsage;  // unreachable: require_subcommand(1)
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fieldft::cli;
  try {
    return run(argc, argv);
  } catch (const fieldft::Error& e) {
    std::cerr << "fieldft: error: " << e.what() << '\n';
    return kExitLibraryBase + static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "fieldft: error: out of memory\n";
    return kExitLibraryBase + static_cast<int>(fieldft::ErrorCode::kOutOfMemory);
  } catch (const std::length_error&) {
    std::cerr << "fieldft: error: the problem is too large for this machine's address space\n";
    return kExitLibraryBase + static_cast<int>(fieldft::ErrorCode::kTooLarge);
  } catch (const std::exception& e) {
    std::cerr << "fieldft: error: unexpected failure: " << e.what() << '\n';
    return kExitInternal;
  } catch (...) {
    std::cerr << "fieldft: error: unexpected failure (unknown exception)\n";
    return kExitInternal;
  }
}
