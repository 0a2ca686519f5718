#include "cli/plot.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "algorithms/models/selection.hpp"
#include "cli/option_checks.hpp"
#include "topology/error.hpp"

namespace collsim {

namespace {

// Colour-blind-safe palette (Okabe & Ito), one colour per algorithm.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#000000", "#F0E442"};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// x tics at about ten of the sizes, labelled in binary units.
std::string xtics(const ComparePlot& plot) {
  std::vector<std::uint64_t> sizes;
  for (const PlotPoint& p : plot.best) sizes.push_back(p.bytes);
  if (sizes.empty()) return "";
  const std::size_t step = (sizes.size() + 9) / 10;
  std::string out = "set xtics (";
  for (std::size_t i = 0; i < sizes.size(); i += step) {
    if (sizes[i] == 0) continue;
    const std::string label = plot.x_nodes ? std::to_string(sizes[i]) : human_bytes(sizes[i]);
    out += fmt::format("{}\"{}\" {}", out.back() == '(' ? "" : ", ", label, sizes[i]);
  }
  return out + ") rotate by -30\n";
}

std::string script(const ComparePlot& plot, const std::string& data, const std::string& out,
                   bool svg) {
  std::string s;
  if (svg) {
    s += "set terminal svg size 1400,620 dynamic enhanced font 'Helvetica,12' background "
         "rgb 'white'\n";
  } else {
    s += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1400,620 "
         "enhanced font 'Helvetica,11' background rgb 'white' } else { set terminal png size "
         "1400,620 }\n";
  }
  s += fmt::format("set output {}\n", quote(out));
  s += "set datafile separator ' '\nset logscale x 2\nset grid xtics ytics lc rgb '#dddddd'\n";
  s += "set key outside right top vertical spacing 1.1 font ',10'\n";
  s += xtics(plot);
  s += fmt::format("set multiplot layout 1,2 title {} font ',14'\n", quote(plot.title));
  for (int panel = 0; panel < 2; ++panel) {
    const bool time = panel == 0;
    if (time) {
      // A little room above and below the data on the log axis (gnuplot's own range snaps to
      // whole decades and puts the smallest times on the border).
      double lo = 0, hi = 0;
      for (const PlotSeries& ser : plot.series) {
        for (const PlotPoint& p : ser.points) {
          if (p.time_us <= 0) continue;
          lo = lo == 0 ? p.time_us : std::min(lo, p.time_us);
          hi = std::max(hi, p.time_us);
        }
      }
      s += "set logscale y 10\nset format y '%g'\nset ylabel 'time (us)'\n"
           "set title 'time (log-log; lower is better)'\nunset key\n";
      if (lo > 0) s += fmt::format("set yrange [{:g}:{:g}]\n", lo / 1.25, hi * 1.25);
    } else {
      s += "unset logscale y\nset ylabel 'busbw (GB/s)'\nset yrange [0:*]\n"
           "set offsets 0, 0, graph 0.04, 0\n"
           "set title 'bus bandwidth (higher is better)'\nset key\n";
    }
    s += plot.x_nodes ? "set xlabel 'nodes'\nplot "
                      : "set xlabel 'size (nccl-tests size column)'\nplot ";
    const int column = time ? 2 : 3;
    for (std::size_t i = 0; i < plot.series.size(); ++i) {
      const PlotSeries& ser = plot.series[i];
      s += fmt::format(
          "{} using 1:{} index {} with linespoints lw 1.6 pt 7 ps 0.45 lc rgb '{}' "
          "dt {} title {}, \\\n  ",
          quote(data), column, i, kColors[ser.algorithm % 8], 1 + ser.protocol % 4,
          quote(ser.name));
    }
    s += fmt::format(
        "{} using 1:{} index {} with points pt 6 ps 1.6 lw 1.5 lc rgb 'black' "
        "title 'best'\n",
        quote(data), column, plot.series.size());
  }
  s += "unset multiplot\nset output\n";
  return s;
}

}  // namespace

void check_plot_output(const std::string& path) {
  if (!ends_with(path, ".svg") && !ends_with(path, ".png")) {
    throw RequestError(
        fmt::format("--plot: expected a file ending in .svg or .png, got \"{}\"", path));
  }
  check_writable(path, "--plot");
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    throw Error(
        "--plot needs gnuplot, which is not installed (Debian/Ubuntu: apt-get install "
        "gnuplot-nox; or run scripts/install-deps.sh)");
  }
}

void write_plot(const std::string& path, const ComparePlot& plot) {
  check_plot_output(path);
  const bool svg = ends_with(path, ".svg");
  std::string dir_template =
      (std::filesystem::temp_directory_path() / "collsim-plot-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr)
    throw Error("--plot: cannot create a temporary directory");
  const std::filesystem::path dir(dir_template);
  const std::string data = (dir / "data.txt").string();
  const std::string gp = (dir / "plot.gp").string();
  {
    std::ofstream d(data);
    auto block = [&](const std::vector<PlotPoint>& pts) {
      for (const PlotPoint& p : pts) {
        if (p.bytes == 0 || p.time_us <= 0) continue;  // no place on a log axis
        d << fmt::format("{} {:.6f} {:.4f}\n", p.bytes, p.time_us, p.busbw_GBps);
      }
      d << "\n\n";
    };
    for (const PlotSeries& s : plot.series) block(s.points);
    block(plot.best);
    std::ofstream(gp) << script(plot, data, std::filesystem::absolute(path).string(), svg);
  }
  const std::string cmd = fmt::format("gnuplot {} 2>{}", quote(gp), quote((dir / "err").string()));
  const int status = std::system(cmd.c_str());
  std::string err;
  {
    std::ifstream e(dir / "err");
    std::getline(e, err);
  }
  std::filesystem::remove_all(dir);
  if (status != 0 || !std::filesystem::exists(path)) {
    throw Error(fmt::format("--plot: gnuplot failed to write \"{}\"{}", path,
                            err.empty() ? "" : ": " + err));
  }
}

}  // namespace collsim
