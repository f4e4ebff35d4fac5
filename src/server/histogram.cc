#include "server/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shoal {

std::vector<double> Histogram::LatencyBounds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

Histogram::Histogram(std::vector<double> bounds) {
  data_.counts.assign(bounds.size(), 0);
  data_.bounds = std::move(bounds);
}

void Histogram::Observe(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < data_.bounds.size(); ++i) {
    if (seconds <= data_.bounds[i]) ++data_.counts[i];
  }
  data_.sum += seconds;
  ++data_.count;
}

HistogramSnapshot Histogram::Snapshot() const {
  std::lock_guard lock(mutex_);
  return data_;
}

namespace {

std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string Number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

std::string LabelText(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ",";
    out += labels[i].first + "=\"" + Escape(labels[i].second) + "\"";
  }
  return out + "}";
}

}  // namespace

void AppendFamilyHeader(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void AppendGauge(std::string& out, const std::string& name, const Labels& labels, double value) {
  out += name + LabelText(labels) + " " + Number(value) + "\n";
}

void AppendHistogram(std::string& out, const std::string& name, const Labels& labels, const HistogramSnapshot& h) {
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    Labels with_le = labels;
    with_le.emplace_back("le", i < h.bounds.size() ? Number(h.bounds[i]) : "+Inf");
    out += name + "_bucket" + LabelText(with_le) + " " + std::to_string(i < h.bounds.size() ? h.counts[i] : h.count) + "\n";
  }
  out += name + "_sum" + LabelText(labels) + " " + Number(h.sum) + "\n";
  out += name + "_count" + LabelText(labels) + " " + std::to_string(h.count) + "\n";
}

}  // namespace shoal
