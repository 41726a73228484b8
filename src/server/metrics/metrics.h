// Prometheus metrics: counters, gauges and histograms with labels, exposed in the text
// format (version 0.0.4) at GET /metrics. Families are declared once with their help text,
// type and (histograms) buckets; the names are a contract (dashboards and alerts use them).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace glassbox::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  void declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets = {});
  void add(const std::string& name, const Labels& labels, double value = 1);     // counter
  void set(const std::string& name, const Labels& labels, double value);         // gauge
  void observe(const std::string& name, const Labels& labels, double value);     // histogram
  void clear(const std::string& name);  // drops every series of a family (gauges refreshed at scrape)
  // The whole registry in the Prometheus text format, plus `extra` lines (process metrics).
  std::string exposition(const std::string& extra = {}) const;

 private:
  struct Series {
    double value = 0;               // counter / gauge
    std::vector<uint64_t> counts;   // histogram: per bucket (not cumulative)
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> buckets;
    std::map<Labels, Series> series;
  };
  Series& series(const std::string& name, const Labels& labels, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Buckets (seconds) for request/queue/compute durations: 0.5 ms to 30 s, ~2.5x apart.
std::vector<double> latency_buckets();

// process_resident_memory_bytes, process_cpu_seconds_total, process_start_time_seconds,
// process_open_fds as exposition lines (from /proc/self).
std::string process_metrics();

}  // namespace glassbox::server
