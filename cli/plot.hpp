// Plots of a comparison, drawn by gnuplot (Debian: gnuplot-nox; scripts/install-deps.sh installs
// it): time against size (log-log) and busbw against size (log x), one line per algorithm and
// protocol (colour by algorithm, dash by protocol), the best at each size marked with circles.
//
//   ComparePlot plot{.title = "allreduce on dgx-h100 (8 ranks), model sim"};
//   plot.series.push_back({"ring/ll", 0, 0, {{8, 15.3, 0.0}, ...}});
//   write_plot("out.png", plot);   // .svg or .png; Error when gnuplot is missing or fails
//
// collsim writes the data and a script to a temporary directory, runs gnuplot on them and
// removes them; the output depends only on the input (and gnuplot's version).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collsim {

struct PlotPoint {
  std::uint64_t bytes = 0;  // the x value: a size, or a node count (ComparePlot::x_nodes)
  double time_us = 0;
  double busbw_GBps = 0;
};

struct PlotSeries {
  std::string name;   // "ring/ll"
  int algorithm = 0;  // colour index
  int protocol = 0;   // dash index
  std::vector<PlotPoint> points;
};

struct ComparePlot {
  std::string title;
  std::vector<PlotSeries> series;
  std::vector<PlotPoint> best;  // the winner at each size
  bool x_nodes = false;         // x is a node count (collsim scale), not a size
};

// Checks up front, before any work: RequestError for a file name not ending in .svg or .png,
// Error when gnuplot is not installed.
void check_plot_output(const std::string& path);

// check_plot_output(), then draws; Error when gnuplot fails.
void write_plot(const std::string& path, const ComparePlot& plot);

}  // namespace collsim
