// A capture's groups placed on a network's dimensions (workload/capture/capture_import.h,
// group_dims), by hand: on a 2 x 4 network NPU n has coordinates (n % 2, n / 2), dimension 0 fastest.
#include <gtest/gtest.h>

#include "core/error.h"
#include "workload/capture/capture_import.h"

namespace chorus::workload::capture {
namespace {

net::Network two_by_four() {
  net::Network net;
  net.name = "2x4";
  net.dims.push_back(net::Dimension{net::DimKind::kSwitch, 2, 8.0, 1, 0});
  net.dims.push_back(net::Dimension{net::DimKind::kSwitch, 4, 8.0, 1, 0});
  return net;
}

TEST(CaptureImport, GroupsAreTheDimensionsTheirRanksSpan) {
  const auto net = two_by_four();
  EXPECT_EQ(group_dims({0, 1}, 8, net, "t"), (std::vector<int>{0}));        // (0,0) (1,0)
  EXPECT_EQ(group_dims({6, 7}, 8, net, "t"), (std::vector<int>{0}));        // (0,3) (1,3)
  EXPECT_EQ(group_dims({1, 3, 5, 7}, 8, net, "t"), (std::vector<int>{1}));  // (1,0) .. (1,3)
  EXPECT_EQ(group_dims({0, 1, 2, 3, 4, 5, 6, 7}, 8, net, "t"), (std::vector<int>{0, 1}));
  EXPECT_TRUE(group_dims({5}, 8, net, "t").empty());  // a group of one sends nothing
}

TEST(CaptureImport, GroupsThatAreNoBlockOfDimensionsAreRefused) {
  const auto net = two_by_four();
  // (0,0) and (1,1): they differ in both dimensions, which hold 8 NPUs, not 2.
  EXPECT_THROW(group_dims({0, 3}, 8, net, "t"), InputError);
  // Half of dimension 1 (4 NPUs): (0,0) (0,1).
  EXPECT_THROW(group_dims({0, 2}, 8, net, "t"), InputError);
  EXPECT_THROW(group_dims({0, 0}, 8, net, "t"), InputError);  // a rank twice
  EXPECT_THROW(group_dims({0, 8}, 8, net, "t"), InputError);  // no rank 8
}

TEST(CaptureImport, TheWorldSpansEveryDimensionOfALargerNetworkButASubGroupCannotBePlaced) {
  const auto net = two_by_four();
  EXPECT_EQ(group_dims({0, 1}, 2, net, "t"), (std::vector<int>{0, 1}));  // a 2-rank capture's world: the job scaled
  try {
    group_dims({0, 1}, 4, net, "collective 3");
    FAIL() << "a sub-group of a 4-rank capture on 8 NPUs was placed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collective 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("network of 4 NPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace chorus::workload::capture
