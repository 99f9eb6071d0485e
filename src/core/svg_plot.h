#pragma once
// A small, dependency-free SVG chart writer for the figures of `chorus reproduce`:
// line charts (optionally log2 x axis or step functions), grouped bar charts and
// vertically stacked small multiples.
//
// Output is a standalone SVG 1.1 document (starts with "<svg", no XML prolog),
// UTF-8, deterministic: the same input gives byte-identical output. All text is
// XML-escaped. Non-finite values (NaN, inf) are skipped: a line is broken at the
// gap, a bar is left out. On a log2 axis, x <= 0 is skipped too.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace chorus::svg {

// One line of a line chart. Points are (x[i], y[i]) for i < min(x.size(), y.size()),
// drawn in the given order.
struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log2_x = false;  // x axis in log2 scale, ticks at powers of two
  bool step = false;    // step function: y[i] holds from x[i] until x[i+1]
  // Fixed y range. Unset sides are automatic: data range rounded out to nice
  // ticks; a non-negative range starts at 0 when its minimum is below 30% of
  // its maximum.
  std::optional<double> y_min, y_max;
  std::vector<Series> series;
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> series_names;    // one colour each (legend)
  std::vector<std::string> group_labels;    // x-axis groups
  std::vector<std::vector<double>> values;  // values[group][series]; missing = no bar
  std::optional<double> y_max;              // y axis always includes 0
};

// Colour of series `index` (Okabe-Ito palette, colour-blind friendly; it cycles
// after 8 series, and line charts then switch to dashed lines).
std::string series_colour(std::size_t index);

std::string render_line_chart(const LineChart& chart, int width_px = 720, int height_px = 420);
std::string render_bar_chart(const BarChart& chart, int width_px = 900, int height_px = 420);

// Small multiples: line charts stacked vertically in one SVG, each panel_height_px
// high. Panels that agree on log2_x share one x range, so they line up.
std::string render_panels(const std::vector<LineChart>& panels, int width_px = 720,
                          int panel_height_px = 260);

// Writes `content` to `path` (truncating). Does not create directories.
// Throws chorus::InputError(path, reason) if the file cannot be written.
void write_text_file(const std::string& path, const std::string& content);

}  // namespace chorus::svg
