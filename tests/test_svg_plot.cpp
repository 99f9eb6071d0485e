// Tests for the SVG chart writer (core/svg_plot.h).
#include "core/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace chorus::svg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// Minimal well-formedness check: tags balance, every '&' starts a known entity,
// no raw '<' inside text.
::testing::AssertionResult well_formed(const std::string& svg) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  while (i < svg.size()) {
    if (svg[i] == '&') {
      static const char* const kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      bool known = false;
      for (const char* e : kEntities) known = known || svg.compare(i, std::string(e).size(), e) == 0;
      if (!known) return ::testing::AssertionFailure() << "bare '&' at " << i;
      ++i;
      continue;
    }
    if (svg[i] != '<') {
      if (svg[i] == '>') return ::testing::AssertionFailure() << "bare '>' at " << i;
      ++i;
      continue;
    }
    const auto end = svg.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unterminated tag at " << i;
    std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return ::testing::AssertionFailure() << "'<' inside tag at " << i;
    if (!tag.empty() && tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        return ::testing::AssertionFailure() << "unexpected </" << name << "> at " << i;
      }
      stack.pop_back();
    } else if (!tag.empty() && tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find_first_of(" \n\t")));
    }
    i = end + 1;
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "unclosed <" << stack.back() << ">";
  return ::testing::AssertionSuccess();
}

// Texts of all <text> elements.
std::vector<std::string> texts(const std::string& svg) {
  std::vector<std::string> out;
  for (auto pos = svg.find("<text"); pos != std::string::npos; pos = svg.find("<text", pos + 1)) {
    const auto open_end = svg.find('>', pos);
    const auto close = svg.find("</text>", open_end);
    out.push_back(svg.substr(open_end + 1, close - open_end - 1));
  }
  return out;
}

bool has_text(const std::string& svg, const std::string& content) {
  for (const auto& t : texts(svg)) {
    if (t == content) return true;
  }
  return false;
}

LineChart utilization_chart() {
  LineChart c;
  c.title = "Bandwidth utilization";
  c.x_label = "Chunks";
  c.y_label = "Utilization (%)";
  c.log2_x = true;
  c.y_min = 0.0;
  c.y_max = 100.0;
  const std::vector<double> chunks = {4, 8, 16, 32, 64, 128, 256, 512};
  c.series.push_back({"Baseline", chunks, {40, 42, 45, 47, 48, 49, 49.5, 50}});
  c.series.push_back({"Themis", chunks, {70, 80, 88, 93, 95, 96, 97, 97.5}});
  return c;
}

BarChart time_chart() {
  BarChart b;
  b.title = "Time per scheduler";
  b.y_label = "Time (ms)";
  b.series_names = {"Baseline", "Themis", "Ideal"};
  b.group_labels = {"2D", "3D", "4D"};
  b.values = {{10, 7, 6}, {12, 8, 7}, {15, 9, 8}};
  return b;
}

TEST(SvgPlot, LineChartIsStandaloneSvg) {
  const std::string svg = render_line_chart(utilization_chart());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(contains(svg, "width=\"720\" height=\"420\""));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(has_text(svg, "Bandwidth utilization"));
  EXPECT_TRUE(has_text(svg, "Chunks"));
  EXPECT_TRUE(has_text(svg, "Utilization (%)"));
  EXPECT_TRUE(has_text(svg, "Baseline"));
  EXPECT_TRUE(has_text(svg, "Themis"));
  EXPECT_EQ(count_of(svg, "<path d=\"M"), 2u);  // one line per series
}

TEST(SvgPlot, BarChartIsStandaloneSvg) {
  const std::string svg = render_bar_chart(time_chart());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(has_text(svg, "Time per scheduler"));
  EXPECT_TRUE(has_text(svg, "Time (ms)"));
  for (const char* name : {"Baseline", "Themis", "Ideal", "2D", "3D", "4D"}) {
    EXPECT_TRUE(has_text(svg, name)) << name;
  }
  // 9 bars + 3 legend swatches + background.
  EXPECT_EQ(count_of(svg, "<rect"), 13u);
}

TEST(SvgPlot, PanelsStackChartsAndShareX) {
  LineChart a;
  a.title = "Baseline";
  a.step = true;
  a.series.push_back({"dim 1", {0, 1, 2, 3}, {1, 0, 1, 0}});
  LineChart b;
  b.title = "Themis";
  b.step = true;
  b.series.push_back({"dim 1", {0, 1, 2}, {1, 1, 0}});
  b.series.push_back({"dim 2", {0, 1.5, 2}, {0, 1, 0}});
  const std::string svg = render_panels({a, b}, 600, 200);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(svg, "width=\"600\" height=\"400\""));
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(has_text(svg, "Baseline"));
  EXPECT_TRUE(has_text(svg, "Themis"));
  EXPECT_TRUE(has_text(svg, "dim 2"));
  EXPECT_EQ(count_of(svg, "<clipPath id="), 2u);
  // Both panels get the same x ticks (0..3) although panel b stops at 2.
  EXPECT_EQ(count_of(svg, ">3.0</text>"), 2u);
  // Clip ids are unique within the document.
  const auto first = svg.find("<clipPath id=\"");
  const auto second = svg.find("<clipPath id=\"", first + 1);
  EXPECT_NE(svg.substr(first, 40), svg.substr(second, 40));
}

TEST(SvgPlot, EscapesText) {
  LineChart c = utilization_chart();
  c.title = "A & B <C>";
  c.x_label = "x \"quoted\" & 'single'";
  c.series[0].name = "R&D";
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(contains(svg, "A &amp; B &lt;C&gt;"));
  EXPECT_TRUE(contains(svg, "R&amp;D"));
  EXPECT_TRUE(contains(svg, "x &quot;quoted&quot; &amp; &apos;single&apos;"));
  EXPECT_FALSE(contains(svg, "A & B"));
  EXPECT_FALSE(contains(svg, "<C>"));

  BarChart b = time_chart();
  b.title = "Q&A";
  b.group_labels[0] = "<ring>";
  const std::string bars = render_bar_chart(b);
  EXPECT_TRUE(well_formed(bars));
  EXPECT_TRUE(contains(bars, "Q&amp;A"));
  EXPECT_TRUE(contains(bars, "&lt;ring&gt;"));
}

TEST(SvgPlot, InvalidUtf8AndControlCharactersAreReplaced) {
  LineChart c;
  c.title = std::string("bad\xff\x01 byte, ok \xc3\xa9");
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(has_text(svg, "bad?  byte, ok \xc3\xa9"));
}

TEST(SvgPlot, Deterministic) {
  EXPECT_EQ(render_line_chart(utilization_chart()), render_line_chart(utilization_chart()));
  EXPECT_EQ(render_bar_chart(time_chart()), render_bar_chart(time_chart()));
  const std::vector<LineChart> panels = {utilization_chart(), utilization_chart()};
  EXPECT_EQ(render_panels(panels), render_panels(panels));
}

TEST(SvgPlot, EmptyInputs) {
  LineChart c;
  c.title = "Nothing";
  c.series.push_back({"empty", {}, {}});
  const std::string svg = render_line_chart(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(has_text(svg, "empty"));   // still in the legend
  EXPECT_FALSE(contains(svg, "<path d=\"M"));  // but no line

  EXPECT_TRUE(well_formed(render_line_chart(LineChart{})));
  EXPECT_TRUE(well_formed(render_bar_chart(BarChart{})));
  const std::string none = render_panels({});
  EXPECT_EQ(none.rfind("<svg", 0), 0u);
  EXPECT_TRUE(well_formed(none));

  LineChart log_empty;
  log_empty.log2_x = true;
  log_empty.series.push_back({"s", {}, {}});
  EXPECT_TRUE(well_formed(render_line_chart(log_empty)));
}

TEST(SvgPlot, NaNPointsAreSkipped) {
  LineChart c;
  c.title = "gaps";
  c.series.push_back({"with gap", {1, 2, 3, 4, 5}, {1, 2, kNaN, 4, 5}});
  c.series.push_back({"all nan", {1, 2}, {kNaN, kNaN}});
  c.series.push_back({"inf", {1, std::numeric_limits<double>::infinity()}, {1, 2}});
  c.series.push_back({"short y", {1, 2, 3}, {3}});
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_FALSE(contains(svg, "nan\""));
  EXPECT_FALSE(contains(svg, "inf\""));
  // The gap splits the first line into two subpaths.
  const auto start = svg.find("<path d=\"M");
  const auto end = svg.find('"', start + 9);
  EXPECT_EQ(count_of(svg.substr(start, end - start), "M"), 2u);
  // 4 usable points of "with gap" + 1 of "inf" + 1 of "short y".
  EXPECT_EQ(count_of(svg, "<circle cx="), 6u + 4u);  // + 4 legend markers

  BarChart b = time_chart();
  b.values[1][1] = kNaN;
  b.values[2].pop_back();  // missing value
  const std::string bars = render_bar_chart(b);
  EXPECT_TRUE(well_formed(bars));
  EXPECT_FALSE(contains(bars, "nan\""));
  EXPECT_EQ(count_of(bars, "<rect"), 13u - 2u);
}

TEST(SvgPlot, Log2AxisTicksAtPowersOfTwo) {
  const std::string svg = render_line_chart(utilization_chart());
  for (const char* tick : {"4", "8", "16", "32", "64", "128", "256", "512"}) {
    EXPECT_TRUE(has_text(svg, tick)) << tick;
  }
  EXPECT_FALSE(has_text(svg, "2"));
  EXPECT_FALSE(has_text(svg, "1024"));
  EXPECT_TRUE(has_text(svg, "80"));  // fixed y range 0..100, ticks every 20

  // Non-positive x values cannot be drawn on a log axis and are skipped.
  LineChart c = utilization_chart();
  c.series[0].x[0] = 0.0;
  c.series[1].x[0] = -4.0;
  const std::string skipped = render_line_chart(c);
  EXPECT_TRUE(well_formed(skipped));
  EXPECT_TRUE(has_text(skipped, "8"));
  EXPECT_FALSE(has_text(skipped, "4"));
}

TEST(SvgPlot, LinearTicksAreNice) {
  LineChart c;
  c.series.push_back({"s", {0, 10}, {0.13, 0.87}});
  const std::string svg = render_line_chart(c);
  for (const char* tick : {"0", "0.2", "0.4", "0.6", "0.8", "1.0", "2", "4", "6", "8", "10"}) {
    EXPECT_TRUE(has_text(svg, tick)) << tick;
  }
  EXPECT_FALSE(has_text(svg, "0.13"));

  LineChart big;
  big.series.push_back({"s", {0, 1}, {0, 3.2e9}});
  const std::string bsvg = render_line_chart(big);
  EXPECT_TRUE(has_text(bsvg, "0.5G"));
  EXPECT_TRUE(has_text(bsvg, "3.5G"));
  EXPECT_TRUE(has_text(bsvg, "0"));
}

TEST(SvgPlot, StepChartDrawsHorizontalThenVertical) {
  LineChart c;
  c.step = true;
  c.y_min = 0.0;
  c.y_max = 1.0;
  c.series.push_back({"busy", {0, 5, 10}, {1, 0, 1}});
  const std::string svg = render_line_chart(c);
  const auto start = svg.find("<path d=\"M");
  const auto end = svg.find('"', start + 9);
  const std::string d = svg.substr(start + 9, end - start - 9);
  // M + 2 steps of two segments each.
  EXPECT_EQ(count_of(d, "L"), 4u);
  EXPECT_FALSE(contains(svg, "<circle cx=")) << "no markers on step charts";
}

TEST(SvgPlot, ManyBarGroupsGetRotatedLabels) {
  BarChart b = time_chart();
  EXPECT_FALSE(contains(render_bar_chart(b), "rotate(-40"));
  b.group_labels.clear();
  b.values.clear();
  for (int i = 0; i < 16; ++i) {
    b.group_labels.push_back("topology " + std::to_string(i));
    b.values.push_back({1.0 + i, 2.0, 3.0});
  }
  const std::string svg = render_bar_chart(b);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count_of(svg, "rotate(-40"), 16u);
}

TEST(SvgPlot, FixedRangesAndColours) {
  LineChart c;
  c.y_min = 0.0;
  c.y_max = 1.0;
  c.series.push_back({"over", {0, 1}, {0.5, 5.0}});  // clipped, not rescaled
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(has_text(svg, "1.0"));
  EXPECT_FALSE(has_text(svg, "5.0"));
  EXPECT_TRUE(contains(svg, "clip-path=\"url(#"));

  EXPECT_EQ(series_colour(0), "#0072B2");
  EXPECT_EQ(series_colour(8), series_colour(0));
  EXPECT_NE(series_colour(1), series_colour(0));
}

TEST(SvgPlot, WriteTextFile) {
  const std::string path = ::testing::TempDir() + "svg_plot_test_out.svg";
  const std::string content = render_bar_chart(time_chart());
  write_text_file(path, content);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream back;
  back << in.rdbuf();
  EXPECT_EQ(back.str(), content);
  std::remove(path.c_str());

  const std::string bad = "/nonexistent-dir-for-chorus-tests/out.svg";
  try {
    write_text_file(bad, content);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), bad);
    EXPECT_FALSE(e.detail().empty());
  }
}

}  // namespace
}  // namespace chorus::svg
