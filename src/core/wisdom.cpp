// Wisdom file: signature, JSON text and the locked read-merge-rename update (core/wisdom.hpp).
#include "core/wisdom.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <variant>
#include <vector>

#include "fieldft/runtime.hpp"

namespace fieldft::core {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// ---- a small JSON reader: enough for this file's flat schema (objects, arrays, strings,
// numbers, true/false/null); any syntax error makes the whole text unreadable.
struct Json;
using JsonObject = std::map<std::string, Json>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> v;
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  Json document() {
    Json j = value(0);
    skip();
    if (i_ != s_.size()) fail("text after the document");
    return j;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(what + " at offset " + std::to_string(i_));
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  Json value(int depth) {
    if (depth > 16) fail("nesting too deep");
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      JsonObject o;
      if (eat('}')) return {o};
      do {
        skip();
        std::string key = string();
        expect(':');
        o[key] = value(depth + 1);
      } while (eat(','));
      expect('}');
      return {o};
    }
    if (c == '[') {
      ++i_;
      JsonArray a;
      if (eat(']')) return {a};
      do a.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
      return {a};
    }
    if (c == '"') return {string()};
    for (const char* word : {"true", "false", "null"}) {
      const std::size_t n = std::strlen(word);
      if (s_.compare(i_, n, word) == 0) {
        i_ += n;
        if (word[0] == 'n') return {nullptr};
        return {word[0] == 't'};
      }
    }
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(d)) fail("expected a value");
    i_ += static_cast<std::size_t>(end - begin);
    return {d};
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unterminated escape");
        c = s_[i_++];
        if (c == 'u') {  // this file writes \u00XX only (control characters)
          if (i_ + 4 > s_.size()) fail("short \\u escape");
          c = static_cast<char>(std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
        } else if (c == 'n') {
          c = '\n';
        } else if (c == 't') {
          c = '\t';
        } else if (c != '"' && c != '\\' && c != '/') {
          fail("unknown escape");
        }
      }
      out += c;
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

template <class V>
const V* field(const JsonObject& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : std::get_if<V>(&it->second.v);
}

std::optional<WisdomEntry> entry_from_json(const JsonObject& o) {
  const auto* method = field<std::string>(o, "method");
  const auto* sigma = field<double>(o, "upsampfac");
  const auto* bins = field<JsonArray>(o, "bin_size");
  const auto* seconds = field<double>(o, "seconds");
  if (!method || !sigma || !bins || bins->size() != 3 || !seconds) return std::nullopt;
  WisdomEntry e;
  try {
    e.method = nufft::parse_method(*method);
  } catch (const Error&) {
    return std::nullopt;
  }
  e.upsampfac = *sigma;
  for (int d = 0; d < 3; ++d) {
    const auto* b = std::get_if<double>(&(*bins)[d].v);
    if (!b || *b < 0 || *b > 1e6) return std::nullopt;
    e.bin_size[d] = static_cast<int>(*b);
  }
  e.seconds = *seconds;
  if (const auto* p = field<double>(o, "planner_seconds")) e.planner_seconds = *p;
  if (const auto* r = field<std::string>(o, "runner_up")) e.runner_up = *r;
  if (const auto* c = field<double>(o, "candidates")) e.candidates = static_cast<int>(*c);
  return e;
}

std::string system_reason() { return std::strerror(errno); }

// Closes a descriptor (and so releases its flock) on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int open_lock(const std::string& path) {
  const std::string lock = path + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  require(fd >= 0, ErrorCode::kInvalidArgument,
          "wisdom file " + path + ": cannot create its lock file " + lock + " (" + system_reason() +
              "); give a writable Options::wisdom_path (or FIELDFT_WISDOM), or planning estimate");
  return fd;
}

std::mutex& process_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string wisdom_device(const nufft::Options& options, int nthreads) {
  if (options.backend != Backend::kCuda) return "cpu " + std::to_string(nthreads) + " threads";
  for (const auto& d : cuda_devices())
    if (d.id == options.device)
      return "cuda " + d.name + " sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
  return "cuda device " + std::to_string(options.device);
}

std::string wisdom_signature(const nufft::PlanInfo& info, const nufft::Options& o, const std::string& device,
                             int precision_bytes, std::int64_t m) {
  // M to the nearest power of two (in log2); 0 stays 0.
  const int m_log2 = m > 0 ? static_cast<int>(std::lround(std::log2(static_cast<double>(m)))) : -1;
  char eps_text[24];
  std::snprintf(eps_text, sizeof eps_text, "%.9g", info.eps);  // 1e-06, not 9.9999999999999995e-07
  std::ostringstream s;
  s << "v" << kWisdomVersion << " " << device << " | type " << info.type << " modes";
  for (int d = 0; d < info.dim; ++d) s << (d ? "x" : " ") << info.modes[d];
  s << " " << (precision_bytes == 4 ? "float" : "double") << " eps " << eps_text << " ntransf "
    << info.ntransf << " M 2^" << m_log2 << " modeord " << info.modeord << " | method "
    << nufft::method_name(o.method) << " upsampfac " << num(o.upsampfac) << " bins " << o.bin_size[0] << "x"
    << o.bin_size[1] << "x" << o.bin_size[2] << " max_batch " << o.max_batch << " reuse " << o.reuse
    << " precompute_max_bytes " << num(o.precompute_max_bytes) << " spread_boxes " << o.spread_boxes
    << " tuning " << o.tuning.bulk_rows << "," << o.tuning.tensor_cores << "," << o.tuning.mode_fft;
  return s.str();
}

std::string describe_config(nufft::Method method, double upsampfac, const std::array<int, 3>& b) {
  std::ostringstream s;
  s << nufft::method_name(method) << " sigma " << upsampfac << " bins ";
  if (b[0] == 0 && b[1] == 0 && b[2] == 0)
    s << "auto";
  else
    s << b[0] << "x" << b[1] << "x" << b[2];
  return s.str();
}

std::string wisdom_to_json(const Wisdom& wisdom) {
  std::string out = "{\n  \"fieldft_wisdom\": " + std::to_string(kWisdomVersion) + ",\n  \"entries\": [";
  bool first = true;
  for (const auto& [sig, e] : wisdom) {
    out += first ? "\n" : ",\n";
    first = false;
    out += "    {\"signature\": " + quoted(sig) + ",\n     \"method\": " + quoted(nufft::method_name(e.method)) +
           ", \"upsampfac\": " + num(e.upsampfac) + ", \"bin_size\": [" + std::to_string(e.bin_size[0]) + ", " +
           std::to_string(e.bin_size[1]) + ", " + std::to_string(e.bin_size[2]) + "],\n     \"seconds\": " +
           num(e.seconds) + ", \"planner_seconds\": " + num(e.planner_seconds) +
           ", \"candidates\": " + std::to_string(e.candidates) + ", \"runner_up\": " + quoted(e.runner_up) + "}";
  }
  return out + (first ? "]\n}\n" : "\n  ]\n}\n");
}

std::optional<Wisdom> wisdom_from_json(const std::string& text, std::string* error) {
  Json doc;
  try {
    doc = JsonParser(text).document();
  } catch (const std::exception& e) {
    if (error) *error = std::string("not valid JSON: ") + e.what();
    return std::nullopt;
  }
  const auto* top = std::get_if<JsonObject>(&doc.v);
  const auto* entries = top ? field<JsonArray>(*top, "entries") : nullptr;
  if (!top || !field<double>(*top, "fieldft_wisdom") || !entries) {
    if (error) *error = "not a fieldft wisdom file (no \"fieldft_wisdom\" and \"entries\")";
    return std::nullopt;
  }
  Wisdom w;
  for (const Json& j : *entries) {
    const auto* o = std::get_if<JsonObject>(&j.v);
    const auto* sig = o ? field<std::string>(*o, "signature") : nullptr;
    if (!sig) continue;
    if (auto e = entry_from_json(*o)) w[*sig] = *e;
  }
  return w;
}

Wisdom read_wisdom(const std::string& path, std::string* problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (problem && errno != ENOENT) *problem = "cannot read " + path + " (" + system_reason() + ")";
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  auto w = wisdom_from_json(text.str(), &error);
  if (!w) {
    if (problem) *problem = path + ": " + error;
    return {};
  }
  return *w;
}

void check_wisdom_writable(const std::string& path) {
  Fd lock{open_lock(path)};
}

void store_wisdom(const std::string& path, const std::string& signature, const WisdomEntry& entry) {
  Fd lock{open_lock(path)};
  require(::flock(lock.fd, LOCK_EX) == 0, ErrorCode::kInvalidArgument,
          "wisdom file " + path + ": cannot lock " + path + ".lock (" + system_reason() + ")");
  Wisdom w = read_wisdom(path);  // a corrupt file is replaced by the entries we have
  w[signature] = entry;
  // The temporary name is unique per process and call, in the file's directory (rename stays on
  // one file system); the lock already serialises writers, this only keeps a crashed writer's
  // leftover from being reused.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    require(static_cast<bool>(out), ErrorCode::kInvalidArgument,
            "wisdom file " + path + ": cannot write " + tmp + " (" + system_reason() + ")");
    out << wisdom_to_json(w);
    out.flush();
    if (!out) {
      const std::string reason = system_reason();
      std::remove(tmp.c_str());
      throw Error(ErrorCode::kInvalidArgument, "wisdom file " + path + ": cannot write " + tmp + " (" + reason + ")");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = system_reason();
    std::remove(tmp.c_str());
    throw Error(ErrorCode::kInvalidArgument, "wisdom file " + path + ": cannot replace it (" + reason + ")");
  }
}

std::string wisdom_path(const nufft::Options& options) {
  if (!options.wisdom_path.empty()) return options.wisdom_path;
  const char* env = std::getenv("FIELDFT_WISDOM");
  return env ? std::string(env) : std::string();
}

namespace {
Wisdom& process_store() {
  static Wisdom w;
  return w;
}
}  // namespace

std::optional<WisdomEntry> process_wisdom(const std::string& signature) {
  std::lock_guard<std::mutex> g(process_mutex());
  auto it = process_store().find(signature);
  if (it == process_store().end()) return std::nullopt;
  return it->second;
}

void remember_wisdom(const std::string& signature, const WisdomEntry& entry) {
  std::lock_guard<std::mutex> g(process_mutex());
  process_store()[signature] = entry;
}

}  // namespace fieldft::core
