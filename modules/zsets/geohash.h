// Geohash arithmetic for the GEO commands, computing exactly what Redis 7.0 computes (the same
// formulas in the same order of floating-point operations), so scores, coordinates, distances
// and search results agree with Redis to the digit:
//   - a position is a 52-bit interleaved geohash (26 bits of longitude in [-180, 180] on the odd
//     bits, 26 of latitude in [-85.05112878, 85.05112878] on the even bits), stored as the
//     member's score;
//   - a search covers the shape with the geohash box of the center and its 8 neighbours at a
//     step (precision) estimated from the radius, then keeps the points truly inside;
//   - distances are haversine on a sphere of radius 6372797.560856 m.
#ifndef VESSEL_MODULES_ZSETS_GEOHASH_H_
#define VESSEL_MODULES_ZSETS_GEOHASH_H_

#include <cstdint>

namespace vessel::zsets::geo {

inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr int kStepMax = 26;  // 52 bits

struct Range {
  double min;
  double max;
};

struct Hash {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool zero() const { return bits == 0 && step == 0; }
};

struct Area {
  Hash hash;
  Range lon;
  Range lat;
};

// The neighbours of a box, in Redis's GeoHashNeighbors order.
struct Neighbors {
  Hash north, east, west, south, north_east, south_east, north_west, south_west;
};

// A search shape: a circle (radius) or an axis-aligned box (width, height), in the unit whose
// size in meters is `conversion`, around center {lon, lat}.
struct Shape {
  enum Type { kCircle = 1, kBox = 2 } type = kCircle;
  double lon = 0, lat = 0;
  double conversion = 1;
  double radius = 0;
  double width = 0, height = 0;
  double bounds[4] = {};  // min lon, min lat, max lon, max lat
};

// The 9 boxes covering a shape (Redis's GeoHashRadius).
struct Cover {
  Hash hash;
  Area area;
  Neighbors neighbors;
};

// Encodes a position at `step` bits per coordinate within the given ranges; false when it is
// out of range (the WGS84 limits are checked whatever the ranges).
bool Encode(const Range& lon, const Range& lat, double longitude, double latitude, uint8_t step,
            Hash* out);
bool EncodeWGS84(double longitude, double latitude, uint8_t step, Hash* out);
bool Decode(const Range& lon, const Range& lat, const Hash& h, Area* out);
// A score (a 52-bit hash) to {lon, lat}, the center of its box; false when it cannot decode.
bool DecodeScore(double score, double* xy);
// The 52-bit score of a position hash.
uint64_t Align52Bits(const Hash& h);
// The score range [*min, *max) of every point inside box h.
void ScoresOfBox(Hash h, uint64_t* min, uint64_t* max);

void GetNeighbors(const Hash& h, Neighbors* out);
uint8_t EstimateStepsByRadius(double range_meters, double lat);
void BoundingBox(Shape* shape);
Cover CoverShape(Shape* shape);

double Distance(double lon1, double lat1, double lon2, double lat2);
// True when the point is inside the shape; *dist gets its distance from the center (meters).
bool WithinShape(const Shape& shape, double score, double* xy, double* dist);

// The standard 11-character geohash string of a score (GEOHASH).
void GeohashString(double score, char out[11]);

}  // namespace vessel::zsets::geo

#endif  // VESSEL_MODULES_ZSETS_GEOHASH_H_
