#include "core/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace chorus::svg {
namespace {

// ---------------------------------------------------------------- style

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
// Yellow last: it is the weakest on white.
constexpr std::array<std::string_view, 8> kPalette = {
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
// Dash pattern per palette cycle (line charts with more than 8 series).
constexpr std::array<std::string_view, 4> kDashes = {"", "7 4", "2 3", "9 3 2 3"};

constexpr std::string_view kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr std::string_view kAxisColour = "#333333";
constexpr std::string_view kGridColour = "#e3e3e3";
constexpr std::string_view kTextColour = "#222222";

constexpr double kTitleFont = 16;
constexpr double kLabelFont = 13;
constexpr double kTickFont = 11;
constexpr double kLegendFont = 12;
// Average glyph advance relative to the font size; generous for DejaVu Sans.
constexpr double kCharWidth = 0.6;

constexpr int kMinWidth = 160;
constexpr int kMinHeight = 120;
constexpr int kTargetTicks = 5;

// ---------------------------------------------------------------- text

// Appends `s` escaped for XML text and attribute values. Control characters
// become spaces and invalid UTF-8 bytes become '?', so the document stays well formed.
void append_escaped(std::string& out, std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c); break;
      }
      ++i;
      continue;
    }
    // Multi-byte UTF-8 sequence: check the lead byte and continuation bytes.
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    }
    bool ok = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      const unsigned char min = k == 1 ? lo : static_cast<unsigned char>(0x80);
      const unsigned char max = k == 1 ? hi : static_cast<unsigned char>(0xBF);
      ok = cc >= min && cc <= max;
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
}

std::string escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_escaped(out, s);
  return out;
}

// Number of code points (UTF-8 continuation bytes not counted).
std::size_t text_length(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

double text_width(std::string_view s, double font_size) {
  return static_cast<double>(text_length(s)) * font_size * kCharWidth;
}

// Keeps at most `max_chars` code points, ending in an ellipsis when cut.
std::string truncate_text(const std::string& s, std::size_t max_chars) {
  if (text_length(s) <= max_chars) return s;
  if (max_chars == 0) return std::string();
  std::size_t kept = 0;
  std::size_t pos = 0;
  while (pos < s.size()) {
    if ((static_cast<unsigned char>(s[pos]) & 0xC0) != 0x80) {
      if (kept == max_chars - 1) break;
      ++kept;
    }
    ++pos;
  }
  return s.substr(0, pos) + "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
}

// Coordinate: two decimals, trailing zeros trimmed, never "-0", bounded.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0.0;
  v = std::clamp(v, -1.0e7, 1.0e7);
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

// ---------------------------------------------------------------- output

class Out {
 public:
  template <typename... Args>
  void line(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    buf_ += '\n';
  }

  // <text> element; `attrs` is a preformatted attribute list (may be empty).
  void text(double x, double y, double font_size, std::string_view anchor, std::string_view content,
            std::string_view attrs = {}) {
    fmt::format_to(std::back_inserter(buf_),
                   "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}{}>",
                   num(x), num(y), num(font_size), anchor, kTextColour, attrs.empty() ? "" : " ",
                   attrs);
    append_escaped(buf_, content);
    buf_ += "</text>\n";
  }

  std::string& str() { return buf_; }

 private:
  std::string buf_;
};

void open_document(Out& out, int width, int height, std::string_view title) {
  out.line(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">",
      width, height, kFontFamily);
  if (!title.empty()) out.line("<title>{}</title>", escaped(title));
  out.line("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>", width, height);
}

void close_document(Out& out) { out.line("</svg>"); }

// Deterministic id for clip paths, distinct between charts with different
// titles/sizes so that several SVGs can be inlined into one HTML page.
std::string make_id(std::string_view kind, std::string_view title, double a, double b, std::size_t n) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a
  auto mix = [&h](std::string_view s) {
    for (char ch : s) {
      h ^= static_cast<unsigned char>(ch);
      h *= 1099511628211ULL;
    }
  };
  mix(kind);
  mix(title);
  mix(fmt::format("|{}|{}|{}", num(a), num(b), n));
  return fmt::format("chorus-{}-{:016x}", kind, h);
}

// ---------------------------------------------------------------- axes

struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  bool log2 = false;
  std::vector<double> ticks;
  std::vector<std::string> labels;

  // Position of `v` along the axis, 0 at lo and 1 at hi.
  double frac(double v) const {
    if (log2) return (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo));
    return (v - lo) / (hi - lo);
  }
  double max_label_width(double font_size) const {
    double w = 0.0;
    for (const auto& l : labels) w = std::max(w, text_width(l, font_size));
    return w;
  }
};

// 1, 2 or 5 times a power of ten, nearest to `raw` (> 0).
double nice_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  if (f < 1.5) return mag;
  if (f < 3.0) return 2.0 * mag;
  if (f < 7.0) return 5.0 * mag;
  return 10.0 * mag;
}

std::vector<std::string> linear_labels(const std::vector<double>& ticks, double step) {
  double max_abs = 0.0;
  for (double t : ticks) max_abs = std::max(max_abs, std::fabs(t));
  double scale = 1.0;
  std::string_view suffix;
  if (max_abs >= 1e12) {
    scale = 1e12, suffix = "T";
  } else if (max_abs >= 1e9) {
    scale = 1e9, suffix = "G";
  } else if (max_abs >= 1e6) {
    scale = 1e6, suffix = "M";
  } else if (max_abs >= 1e5) {
    scale = 1e3, suffix = "k";
  }
  const double decimals_raw = -std::floor(std::log10(step / scale) + 1e-9);
  std::vector<std::string> labels;
  labels.reserve(ticks.size());
  for (double t : ticks) {
    std::string s;
    if (decimals_raw > 6 || max_abs >= 1e15) {
      s = fmt::format("{:.3g}", t);
    } else {
      const int decimals = static_cast<int>(std::max(0.0, decimals_raw));
      s = fmt::format("{:.{}f}", t / scale, decimals);
      if (s.find_first_not_of("-0.") == std::string::npos) s = "0";  // "-0", "0.00"
      if (s != "0") s += suffix;
    }
    labels.push_back(std::move(s));
  }
  return labels;
}

enum class ZeroMode { kNever, kNear, kAlways };

// Linear axis over the data range [dmin, dmax] (empty when dmin > dmax), with
// optional fixed ends. Automatic ends are rounded out to the tick step.
Axis linear_axis(double dmin, double dmax, std::optional<double> fix_lo, std::optional<double> fix_hi,
                 ZeroMode zero) {
  if (fix_lo && !std::isfinite(*fix_lo)) fix_lo.reset();
  if (fix_hi && !std::isfinite(*fix_hi)) fix_hi.reset();
  if (dmin > dmax) {  // no data
    dmin = 0.0;
    dmax = 1.0;
  }
  double lo = fix_lo.value_or(dmin);
  double hi = fix_hi.value_or(dmax);
  auto span = [](double v) { return v == 0.0 ? 1.0 : std::fabs(v); };
  if (!(hi > lo)) {
    if (fix_lo && fix_hi && lo > hi) {
      std::swap(lo, hi);
    } else if (fix_lo && !fix_hi) {
      hi = lo + span(lo);
    } else if (fix_hi && !fix_lo) {
      lo = hi - span(hi);
    } else if (fix_lo && fix_hi) {
      hi = lo + span(lo);
    } else if (lo == 0.0) {
      hi = 1.0;
    } else {
      const double pad = 0.5 * span(lo);
      lo -= pad;
      hi += pad;
    }
  }
  if (zero == ZeroMode::kAlways) {
    if (!fix_lo) lo = std::min(lo, 0.0);
    if (!fix_hi) hi = std::max(hi, 0.0);
  } else if (zero == ZeroMode::kNear) {
    if (!fix_lo && lo > 0.0 && lo <= 0.3 * hi) lo = 0.0;
    if (!fix_hi && hi < 0.0 && hi >= 0.3 * lo) hi = 0.0;
  }
  if (!std::isfinite(hi - lo) || !(hi > lo)) {  // absurd magnitudes
    lo = 0.0;
    hi = 1.0;
  }

  Axis axis;
  const double step = nice_step((hi - lo) / kTargetTicks);
  if (!fix_lo) lo = std::floor(lo / step + 1e-9) * step;
  if (!fix_hi) hi = std::ceil(hi / step - 1e-9) * step;
  axis.lo = lo;
  axis.hi = hi;
  const double first = std::ceil(lo / step - 1e-9);
  const double last = std::floor(hi / step + 1e-9);
  for (double k = first; k <= last && axis.ticks.size() < 64; k += 1.0) {
    double t = k * step;
    if (std::fabs(t) < step * 1e-9) t = 0.0;
    axis.ticks.push_back(t);
  }
  axis.labels = linear_labels(axis.ticks, step);
  return axis;
}

std::string pow2_label(int e) {
  if (e >= 0 && e <= 20) return fmt::format("{}", std::uint64_t{1} << e);
  if (e < 0 && e >= -6) return fmt::format("{:g}", std::ldexp(1.0, e));
  return fmt::format("2^{}", e);
}

// Log2 axis over positive data [dmin, dmax], bounded by powers of two.
Axis log2_axis(double dmin, double dmax) {
  if (!(dmin > 0.0) || dmin > dmax) {  // no data
    dmin = 1.0;
    dmax = 2.0;
  }
  int e_lo = static_cast<int>(std::clamp(std::floor(std::log2(dmin) + 1e-9), -60.0, 60.0));
  int e_hi = static_cast<int>(std::clamp(std::ceil(std::log2(dmax) - 1e-9), -60.0, 60.0));
  if (e_hi <= e_lo) e_hi = e_lo + 1;
  const int count = e_hi - e_lo;
  const int stride = std::max(1, (count + 7) / 8);
  Axis axis;
  axis.log2 = true;
  axis.lo = std::ldexp(1.0, e_lo);
  axis.hi = std::ldexp(1.0, e_hi);
  for (int e = e_lo; e <= e_hi; e += stride) {
    axis.ticks.push_back(std::ldexp(1.0, e));
    axis.labels.push_back(pow2_label(e));
  }
  return axis;
}

// ---------------------------------------------------------------- layout pieces

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
};

struct LegendItem {
  std::string name;
  std::size_t index = 0;  // series index (colour)
};

constexpr double kLegendSwatch = 26;
constexpr double kLegendGap = 6;
constexpr double kLegendSpacing = 18;
constexpr double kLegendRow = 18;

double legend_item_width(const LegendItem& item) {
  return kLegendSwatch + kLegendGap + text_width(item.name, kLegendFont) + kLegendSpacing;
}

// Assigns legend items to rows that fit in `width`; returns the row of each item.
std::vector<std::size_t> legend_rows(const std::vector<LegendItem>& items, double width,
                                     std::size_t* row_count) {
  std::vector<std::size_t> rows;
  double cursor = 0.0;
  std::size_t row = 0;
  for (const auto& item : items) {
    const double w = legend_item_width(item);
    if (cursor > 0.0 && cursor + w - kLegendSpacing > width) {
      ++row;
      cursor = 0.0;
    }
    rows.push_back(row);
    cursor += w;
  }
  *row_count = items.empty() ? 0 : row + 1;
  return rows;
}

std::string_view dash_for(std::size_t index) { return kDashes[(index / kPalette.size()) % kDashes.size()]; }

std::string dash_attr(std::size_t index) {
  const auto d = dash_for(index);
  return d.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", d);
}

// Draws legend rows starting at (x, y) (top of the first row).
void draw_legend(Out& out, const std::vector<LegendItem>& items, const std::vector<std::size_t>& rows,
                 double x, double y, bool bars, bool markers) {
  double cursor = 0.0;
  std::size_t row = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (rows[i] != row) {
      row = rows[i];
      cursor = 0.0;
    }
    const auto& item = items[i];
    const std::string colour = series_colour(item.index);
    const double sx = x + cursor;
    const double cy = y + static_cast<double>(row) * kLegendRow + kLegendRow / 2.0;
    if (bars) {
      out.line("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", num(sx + 6), num(cy - 6),
               num(14), num(12), colour);
    } else {
      out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>",
               num(sx), num(cy), num(sx + kLegendSwatch), num(cy), colour, dash_attr(item.index));
      if (markers) {
        out.line("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", num(sx + kLegendSwatch / 2.0),
                 num(cy), colour);
      }
    }
    out.text(sx + kLegendSwatch + kLegendGap, cy + kLegendFont * 0.35, kLegendFont, "start", item.name);
    cursor += legend_item_width(item);
  }
}

void draw_title(Out& out, std::string_view title, double cx, double y) {
  if (title.empty()) return;
  out.text(cx, y, kTitleFont, "middle", title, "font-weight=\"bold\"");
}

double y_pos(const Axis& axis, const Rect& plot, double v) { return plot.bottom() - axis.frac(v) * plot.h; }
double x_pos(const Axis& axis, const Rect& plot, double v) { return plot.x + axis.frac(v) * plot.w; }

// Horizontal grid lines, y ticks and labels, and the y axis label.
void draw_y_axis(Out& out, const Axis& axis, const Rect& plot, std::string_view label) {
  for (std::size_t i = 0; i < axis.ticks.size(); ++i) {
    const double y = y_pos(axis, plot, axis.ticks[i]);
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>",
             num(plot.x), num(y), num(plot.right()), num(y), kGridColour);
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>",
             num(plot.x - 5), num(y), num(plot.x), num(y), kAxisColour);
    out.text(plot.x - 8, y + kTickFont * 0.35, kTickFont, "end", axis.labels[i]);
  }
  if (!label.empty()) {
    // Rotated text: glyphs extend left of the baseline by the ascent.
    const double label_x = plot.x - 8.0 - axis.max_label_width(kTickFont) - 8.0 - kLabelFont * 0.25;
    const double cy = plot.y + plot.h / 2.0;
    out.text(label_x, cy, kLabelFont, "middle", label,
             fmt::format("transform=\"rotate(-90 {} {})\"", num(label_x), num(cy)));
  }
}

// Axis lines on the left and bottom of the plot area.
void draw_frame(Out& out, const Rect& plot) {
  out.line("<polyline points=\"{0},{1} {0},{2} {3},{2}\" fill=\"none\" stroke=\"{4}\" stroke-width=\"1.2\"/>",
           num(plot.x), num(plot.y), num(plot.bottom()), num(plot.right()), kAxisColour);
}

// ---------------------------------------------------------------- line chart

struct Point {
  double x, y;
};

bool usable(double x, double y, bool log2_x) {
  return std::isfinite(x) && std::isfinite(y) && (!log2_x || x > 0.0);
}

struct Extent {
  double xmin = std::numeric_limits<double>::infinity();
  double xmax = -std::numeric_limits<double>::infinity();
  double ymin = std::numeric_limits<double>::infinity();
  double ymax = -std::numeric_limits<double>::infinity();
};

Extent data_extent(const LineChart& chart) {
  Extent e;
  for (const auto& s : chart.series) {
    const std::size_t n = std::min(s.x.size(), s.y.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!usable(s.x[i], s.y[i], chart.log2_x)) continue;
      e.xmin = std::min(e.xmin, s.x[i]);
      e.xmax = std::max(e.xmax, s.x[i]);
      e.ymin = std::min(e.ymin, s.y[i]);
      e.ymax = std::max(e.ymax, s.y[i]);
    }
  }
  return e;
}

Axis x_axis_for(const LineChart& chart, double xmin, double xmax) {
  if (chart.log2_x) return log2_axis(xmin, xmax);
  return linear_axis(xmin, xmax, std::nullopt, std::nullopt, ZeroMode::kNever);
}

constexpr std::size_t kMaxMarkers = 60;

// Draws `chart` into the box (ox, oy, width, height). `shared_x` overrides the x axis.
void draw_line_chart(Out& out, const LineChart& chart, double ox, double oy, double width, double height,
                     const Axis* shared_x, const std::string& clip_id) {
  const Extent ext = data_extent(chart);
  const Axis xaxis = shared_x != nullptr ? *shared_x : x_axis_for(chart, ext.xmin, ext.xmax);
  const Axis yaxis = linear_axis(ext.ymin, ext.ymax, chart.y_min, chart.y_max, ZeroMode::kNear);

  bool markers = !chart.step;
  if (markers) {
    for (const auto& s : chart.series) markers = markers && std::min(s.x.size(), s.y.size()) <= kMaxMarkers;
  }

  // Horizontal layout.
  const double ylabel_w = chart.y_label.empty() ? 0.0 : kLabelFont + 10.0;
  const double left = ox + 12.0 + ylabel_w + yaxis.max_label_width(kTickFont) + 10.0;
  const double right_pad = std::max(20.0, xaxis.max_label_width(kTickFont) / 2.0 + 6.0);
  const double right = ox + width - right_pad;

  // Vertical layout: title, legend, plot, tick labels, x label.
  std::vector<LegendItem> items;
  for (std::size_t i = 0; i < chart.series.size(); ++i) items.push_back({chart.series[i].name, i});
  std::size_t row_count = 0;
  const auto rows = legend_rows(items, std::max(1.0, right - left), &row_count);
  double top = oy + 8.0;
  const double title_y = top + kTitleFont;
  if (!chart.title.empty()) top += kTitleFont + 10.0;
  const double legend_y = top;
  top += static_cast<double>(row_count) * kLegendRow + 12.0;
  const double bottom = oy + height - 10.0 - (chart.x_label.empty() ? 0.0 : kLabelFont + 8.0) -
                        (kTickFont + 10.0);

  Rect plot{left, top, std::max(10.0, right - left), std::max(10.0, bottom - top)};

  draw_title(out, chart.title, ox + width / 2.0, title_y);
  draw_legend(out, items, rows, left, legend_y, false, markers);
  draw_y_axis(out, yaxis, plot, chart.y_label);

  // X grid, ticks, labels.
  for (std::size_t i = 0; i < xaxis.ticks.size(); ++i) {
    const double x = x_pos(xaxis, plot, xaxis.ticks[i]);
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>", num(x),
             num(plot.y), num(x), num(plot.bottom()), kGridColour);
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>", num(x),
             num(plot.bottom()), num(x), num(plot.bottom() + 5), kAxisColour);
    out.text(x, plot.bottom() + 8.0 + kTickFont, kTickFont, "middle", xaxis.labels[i]);
  }
  if (!chart.x_label.empty()) {
    out.text(plot.x + plot.w / 2.0, oy + height - 12.0, kLabelFont, "middle", chart.x_label);
  }
  draw_frame(out, plot);

  // Data, clipped to the plot area (fixed y ranges may cut values off).
  out.line("<clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>", clip_id,
           num(plot.x - 4), num(plot.y - 4), num(plot.w + 8), num(plot.h + 8));
  out.line("<g clip-path=\"url(#{})\">", clip_id);
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const auto& s = chart.series[si];
    const std::string colour = series_colour(si);
    const std::size_t n = std::min(s.x.size(), s.y.size());
    std::vector<Point> pts;
    std::string d;
    bool pen_down = false;
    double prev_y = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!usable(s.x[i], s.y[i], chart.log2_x)) {
        pen_down = false;  // break the line at the gap
        continue;
      }
      const double px = x_pos(xaxis, plot, s.x[i]);
      const double py = y_pos(yaxis, plot, s.y[i]);
      pts.push_back({px, py});
      if (!pen_down) {
        fmt::format_to(std::back_inserter(d), "M{} {}", num(px), num(py));
      } else if (chart.step) {
        fmt::format_to(std::back_inserter(d), "L{} {}L{} {}", num(px), num(prev_y), num(px), num(py));
      } else {
        fmt::format_to(std::back_inserter(d), "L{} {}", num(px), num(py));
      }
      pen_down = true;
      prev_y = py;
    }
    if (!d.empty()) {
      out.line(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\" "
          "stroke-linecap=\"round\"{}/>",
          d, colour, dash_attr(si));
    }
    if (markers) {
      for (const auto& p : pts) {
        out.line("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", num(p.x), num(p.y), colour);
      }
    }
  }
  out.line("</g>");
}

int clamp_size(int v, int min) { return std::max(v, min); }

}  // namespace

std::string series_colour(std::size_t index) { return std::string(kPalette[index % kPalette.size()]); }

std::string render_line_chart(const LineChart& chart, int width_px, int height_px) {
  const int w = clamp_size(width_px, kMinWidth);
  const int h = clamp_size(height_px, kMinHeight);
  Out out;
  open_document(out, w, h, chart.title);
  draw_line_chart(out, chart, 0.0, 0.0, w, h, nullptr, make_id("clip", chart.title, w, h, 0));
  close_document(out);
  return std::move(out.str());
}

std::string render_panels(const std::vector<LineChart>& panels, int width_px, int panel_height_px) {
  const int w = clamp_size(width_px, kMinWidth);
  const int ph = clamp_size(panel_height_px, kMinHeight);
  const int h = ph * static_cast<int>(std::max<std::size_t>(1, panels.size()));
  Out out;
  std::string doc_title;
  for (const auto& p : panels) {
    if (p.title.empty()) continue;
    if (!doc_title.empty()) doc_title += "; ";
    doc_title += p.title;
  }
  open_document(out, w, h, doc_title);

  // Shared x range when all panels use the same kind of x axis.
  std::optional<Axis> shared;
  if (!panels.empty() &&
      std::all_of(panels.begin(), panels.end(), [&](const LineChart& p) { return p.log2_x == panels[0].log2_x; })) {
    double xmin = std::numeric_limits<double>::infinity();
    double xmax = -std::numeric_limits<double>::infinity();
    for (const auto& p : panels) {
      const Extent e = data_extent(p);
      xmin = std::min(xmin, e.xmin);
      xmax = std::max(xmax, e.xmax);
    }
    shared = x_axis_for(panels[0], xmin, xmax);
  }

  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double oy = static_cast<double>(i) * ph;
    const std::string id = make_id("panel", doc_title, w, ph, i);
    draw_line_chart(out, panels[i], 0.0, oy, w, ph, shared ? &*shared : nullptr, id);
    if (i + 1 < panels.size()) {
      out.line("<line x1=\"8\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"{2}\" stroke-width=\"1\"/>",
               num(oy + ph), w - 8, kGridColour);
    }
  }
  close_document(out);
  return std::move(out.str());
}

std::string render_bar_chart(const BarChart& chart, int width_px, int height_px) {
  const int w = clamp_size(width_px, kMinWidth);
  const int h = clamp_size(height_px, kMinHeight);
  const std::size_t n_groups = std::max(chart.group_labels.size(), chart.values.size());
  std::size_t n_series = chart.series_names.size();
  for (const auto& row : chart.values) n_series = std::max(n_series, row.size());
  auto value_at = [&](std::size_t g, std::size_t s) {
    if (g >= chart.values.size() || s >= chart.values[g].size()) return std::numeric_limits<double>::quiet_NaN();
    return chart.values[g][s];
  };

  double vmin = std::numeric_limits<double>::infinity();
  double vmax = -std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < n_groups; ++g) {
    for (std::size_t s = 0; s < n_series; ++s) {
      const double v = value_at(g, s);
      if (!std::isfinite(v)) continue;
      vmin = std::min(vmin, v);
      vmax = std::max(vmax, v);
    }
  }
  const Axis yaxis = linear_axis(vmin, vmax, std::nullopt, chart.y_max, ZeroMode::kAlways);

  Out out;
  open_document(out, w, h, chart.title);

  const double width = w;
  const double height = h;
  const double ylabel_w = chart.y_label.empty() ? 0.0 : kLabelFont + 10.0;
  const double base_left = 12.0 + ylabel_w + yaxis.max_label_width(kTickFont) + 10.0;
  const double right = width - 20.0;
  const double n_slots = static_cast<double>(std::max<std::size_t>(1, n_groups));
  double left = base_left;
  double group_w = std::max(10.0, right - left) / n_slots;

  // Group labels: horizontal if they fit, else rotated (and thinned/truncated if need be).
  std::vector<std::string> labels;
  for (std::size_t g = 0; g < n_groups; ++g) labels.push_back(g < chart.group_labels.size() ? chart.group_labels[g] : "");
  double max_label_w = 0.0;
  for (const auto& l : labels) max_label_w = std::max(max_label_w, text_width(l, kTickFont));
  const bool rotate = max_label_w > group_w * 0.92;
  constexpr double kAngle = 40.0;
  const double sin_a = std::sin(kAngle * 3.14159265358979323846 / 180.0);
  const double cos_a = std::cos(kAngle * 3.14159265358979323846 / 180.0);
  double label_h = kTickFont + 10.0;
  std::size_t label_stride = 1;
  if (rotate) {
    const double max_h = height * 0.35;
    double needed = max_label_w * sin_a + kTickFont * cos_a + 12.0;
    if (needed > max_h) {
      const double chars = (max_h - kTickFont * cos_a - 12.0) / (sin_a * kTickFont * kCharWidth);
      const auto keep = static_cast<std::size_t>(std::max(3.0, std::floor(chars)));
      for (auto& l : labels) l = truncate_text(l, keep);
      needed = max_h;
    }
    label_h = needed;
    // Rotated labels reach left of their group; widen the left margin (up to a
    // limit) so the first ones stay on the canvas, and cut those that still don't.
    const double anchor_dx = kTickFont * 0.3;
    const double max_left = std::max(base_left, width * 0.3);
    for (int iter = 0; iter < 4; ++iter) {
      double need = base_left;
      for (std::size_t g = 0; g < n_groups; ++g) {
        const double reach = text_width(labels[g], kTickFont) * cos_a + kTickFont * sin_a;
        need = std::max(need, reach - (static_cast<double>(g) + 0.5) * group_w - anchor_dx + 6.0);
      }
      left = std::min(need, max_left);
      group_w = std::max(10.0, right - left) / n_slots;
    }
    for (std::size_t g = 0; g < n_groups; ++g) {
      const double room = left - 6.0 + (static_cast<double>(g) + 0.5) * group_w + anchor_dx - kTickFont * sin_a;
      const double chars = room / (cos_a * kTickFont * kCharWidth);
      if (text_width(labels[g], kTickFont) * cos_a > room) {
        labels[g] = truncate_text(labels[g], static_cast<std::size_t>(std::max(1.0, std::floor(chars))));
      }
    }
    const double row_h = kTickFont * 1.3;  // room each rotated label needs along the axis
    if (group_w < row_h) label_stride = static_cast<std::size_t>(std::ceil(row_h / group_w));
  }

  const double plot_w = std::max(10.0, right - left);
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < n_series; ++s) {
    items.push_back({s < chart.series_names.size() ? chart.series_names[s] : fmt::format("series {}", s + 1), s});
  }
  std::size_t row_count = 0;
  const auto rows = legend_rows(items, plot_w, &row_count);
  double top = 8.0;
  const double title_y = top + kTitleFont;
  if (!chart.title.empty()) top += kTitleFont + 10.0;
  const double legend_y = top;
  top += static_cast<double>(row_count) * kLegendRow + 12.0;
  const double bottom = height - 10.0 - label_h;
  const Rect plot{left, top, plot_w, std::max(10.0, bottom - top)};

  draw_title(out, chart.title, width / 2.0, title_y);
  draw_legend(out, items, rows, left, legend_y, true, false);
  draw_y_axis(out, yaxis, plot, chart.y_label);

  // Bars, clamped to the plot area.
  const double base = y_pos(yaxis, plot, std::clamp(0.0, yaxis.lo, yaxis.hi));
  const double inner = group_w * 0.8;
  const double bar_w = inner / static_cast<double>(std::max<std::size_t>(1, n_series));
  const double gap = std::min(1.0, bar_w * 0.1);
  for (std::size_t g = 0; g < n_groups; ++g) {
    const double gx = plot.x + static_cast<double>(g) * group_w + (group_w - inner) / 2.0;
    for (std::size_t s = 0; s < n_series; ++s) {
      const double v = value_at(g, s);
      if (!std::isfinite(v)) continue;
      const double vy = std::clamp(y_pos(yaxis, plot, v), plot.y, plot.bottom());
      const double y0 = std::min(base, vy);
      const double y1 = std::max(base, vy);
      out.line("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
               num(gx + static_cast<double>(s) * bar_w + gap / 2.0), num(y0), num(bar_w - gap), num(y1 - y0),
               series_colour(s));
    }
  }
  if (yaxis.lo < 0.0 && yaxis.hi > 0.0) {
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>", num(plot.x),
             num(base), num(plot.right()), num(base), kAxisColour);
  }

  // Group ticks and labels.
  for (std::size_t g = 0; g < n_groups; g += label_stride) {
    const double cx = plot.x + (static_cast<double>(g) + 0.5) * group_w;
    out.line("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>", num(cx),
             num(plot.bottom()), num(cx), num(plot.bottom() + 5), kAxisColour);
    if (rotate) {
      const double ty = plot.bottom() + 10.0 + kTickFont * 0.5;
      const double tx = cx + kTickFont * 0.3;
      out.text(tx, ty, kTickFont, "end", labels[g],
               fmt::format("transform=\"rotate(-{} {} {})\"", num(kAngle), num(tx), num(ty)));
    } else {
      out.text(cx, plot.bottom() + 8.0 + kTickFont, kTickFont, "middle", labels[g]);
    }
  }
  draw_frame(out, plot);
  close_document(out);
  return std::move(out.str());
}

void write_text_file(const std::string& path, const std::string& content) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    const int err = errno;
    throw InputError(path, "cannot open for writing: " +
                               (err != 0 ? std::generic_category().message(err) : std::string("unknown error")));
  }
  bool ok = content.empty() || std::fwrite(content.data(), 1, content.size(), f) == content.size();
  int err = ok ? 0 : errno;
  if (std::fflush(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    throw InputError(path, "cannot write: " +
                               (err != 0 ? std::generic_category().message(err) : std::string("write failed")));
  }
}

}  // namespace chorus::svg
