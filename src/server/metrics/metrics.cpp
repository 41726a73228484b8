#include "server/metrics/metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace glassbox::server {
namespace {

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char b[40];
  snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string label_text(const Labels& labels, const std::string& extra_key = {}, const std::string& extra_value = {}) {
  if (labels.empty() && extra_key.empty()) return "";
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    s += (first ? "" : ",") + k + "=\"" + escape_label(v) + "\"";
    first = false;
  }
  if (!extra_key.empty()) s += (first ? "" : ",") + extra_key + "=\"" + extra_value + "\"";
  return s + "}";
}

const char* type_name(Metrics::Type t) {
  return t == Metrics::Type::kCounter ? "counter" : t == Metrics::Type::kGauge ? "gauge" : "histogram";
}

}  // namespace

std::vector<double> latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

void Metrics::declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  families_[name] = Family{type, help, std::move(buckets), {}};
}

Metrics::Series& Metrics::series(const std::string& name, const Labels& labels, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) it = families_.emplace(name, Family{type, "undeclared", {}, {}}).first;
  Series& s = it->second.series[labels];
  if (type == Type::kHistogram && s.counts.empty()) s.counts.assign(it->second.buckets.size(), 0);
  return s;
}

void Metrics::add(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  series(name, labels, Type::kCounter).value += value;
}

void Metrics::set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  series(name, labels, Type::kGauge).value = value;
}

void Metrics::observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = series(name, labels, Type::kHistogram);
  const auto& buckets = families_[name].buckets;
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (value <= buckets[i]) {
      ++s.counts[i];
      break;
    }
  }
  ++s.count;
  s.sum += value;
}

void Metrics::clear(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) it->second.series.clear();
}

std::string Metrics::exposition(const std::string& extra) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    out << "# HELP " << name << " " << f.help << "\n# TYPE " << name << " " << type_name(f.type) << "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out << name << label_text(labels) << " " << number(s.value) << "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += s.counts[i];
        out << name << "_bucket" << label_text(labels, "le", number(f.buckets[i])) << " " << cumulative << "\n";
      }
      out << name << "_bucket" << label_text(labels, "le", "+Inf") << " " << s.count << "\n";
      out << name << "_sum" << label_text(labels) << " " << number(s.sum) << "\n";
      out << name << "_count" << label_text(labels) << " " << s.count << "\n";
    }
  }
  out << extra;
  return out.str();
}

std::string process_metrics() {
  std::ostringstream out;
  const long page = sysconf(_SC_PAGESIZE), ticks = sysconf(_SC_CLK_TCK);
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  out << "# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n"
      << "process_resident_memory_bytes " << resident * page << "\n";
  out << "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n# TYPE process_virtual_memory_bytes gauge\n"
      << "process_virtual_memory_bytes " << size * page << "\n";
  std::ifstream statf("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(statf)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  std::istringstream fields(close == std::string::npos ? "" : stat.substr(close + 2));
  std::vector<std::string> f;
  for (std::string x; fields >> x;) f.push_back(x);
  // After the command: state(0) ... utime(11) stime(12) ... starttime(19), in clock ticks.
  if (f.size() > 19) {
    const double cpu = (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(ticks);
    out << "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        << "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total " << number(cpu) << "\n";
    std::ifstream uptime_f("/proc/uptime");
    double uptime = 0;
    uptime_f >> uptime;
    const double started_ago = uptime - std::stod(f[19]) / static_cast<double>(ticks);
    const double start = static_cast<double>(time(nullptr)) - started_ago;
    out << "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
        << "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds " << number(std::floor(start)) << "\n";
  }
  int fds = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++fds;
    closedir(d);
    fds -= 3;  // ".", ".." and the directory's own descriptor
  }
  out << "# HELP process_open_fds Number of open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds " << fds << "\n";
  return out.str();
}

}  // namespace glassbox::server
