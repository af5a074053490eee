// Geohash encoding and decoding, neighbour boxes, search covers and distances (see
// geohash.h): the arithmetic of Redis 7.0's geohash.c and geohash_helper.c, written anew.
#include "geohash.h"

#include <cmath>

namespace vessel::zsets::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kEarthRadius = 6372797.560856;  // meters, as Redis
constexpr double kMercatorMax = 20037726.37;
constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};

double DegRad(double ang) { return ang * kDegToRad; }
double RadDeg(double ang) { return ang / kDegToRad; }

// Spreads the 32 bits of v to the even bits of the result.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

// Gathers the even bits of x into 32 bits.
uint32_t Gather(uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<uint32_t>(x);
}

bool RangeZero(const Range& r) { return r.max == 0 && r.min == 0; }

// Moves a box one step east (d > 0) or west along the odd (longitude) bits.
void MoveX(Hash* h, int d) {
  if (d == 0) return;
  uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaull;
  const uint64_t y = h->bits & 0x5555555555555555ull;
  const uint64_t zz = 0x5555555555555555ull >> (64 - h->step * 2);
  if (d > 0) {
    x = x + (zz + 1);
  } else {
    x = x | zz;
    x = x - (zz + 1);
  }
  x &= (0xaaaaaaaaaaaaaaaaull >> (64 - h->step * 2));
  h->bits = x | y;
}

// Moves a box one step north (d > 0) or south along the even (latitude) bits.
void MoveY(Hash* h, int d) {
  if (d == 0) return;
  const uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaull;
  uint64_t y = h->bits & 0x5555555555555555ull;
  const uint64_t zz = 0xaaaaaaaaaaaaaaaaull >> (64 - h->step * 2);
  if (d > 0) {
    y = y + (zz + 1);
  } else {
    y = y | zz;
    y = y - (zz + 1);
  }
  y &= (0x5555555555555555ull >> (64 - h->step * 2));
  h->bits = x | y;
}

Hash Moved(Hash h, int dx, int dy) {
  MoveX(&h, dx);
  MoveY(&h, dy);
  return h;
}

// A double score to the 64-bit integer C's conversion gives on x86-64 (Redis casts the
// score to uint64_t).
uint64_t ScoreBits(double score) {
  if (score >= 0 && score < 18446744073709551616.0) return static_cast<uint64_t>(score);
  if (score < 0 && score > -9223372036854775808.0) {
    return static_cast<uint64_t>(static_cast<int64_t>(score));
  }
  return 0x8000000000000000ull;
}

double LatDistance(double lat1d, double lat2d) {
  return kEarthRadius * std::fabs(DegRad(lat2d) - DegRad(lat1d));
}

}  // namespace

bool Encode(const Range& lon, const Range& lat, double longitude, double latitude, uint8_t step,
            Hash* out) {
  if (step > 32 || step == 0 || RangeZero(lat) || RangeZero(lon)) return false;
  if (longitude > kLonMax || longitude < kLonMin || latitude > kLatMax || latitude < kLatMin) {
    return false;
  }
  out->bits = 0;
  out->step = step;
  if (latitude < lat.min || latitude > lat.max || longitude < lon.min || longitude > lon.max) {
    return false;
  }
  double lat_offset = (latitude - lat.min) / (lat.max - lat.min);
  double lon_offset = (longitude - lon.min) / (lon.max - lon.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  out->bits =
      Spread(static_cast<uint32_t>(lat_offset)) | (Spread(static_cast<uint32_t>(lon_offset)) << 1);
  return true;
}

bool EncodeWGS84(double longitude, double latitude, uint8_t step, Hash* out) {
  return Encode(kLonRange, kLatRange, longitude, latitude, step, out);
}

bool Decode(const Range& lon, const Range& lat, const Hash& h, Area* out) {
  if (h.zero() || RangeZero(lat) || RangeZero(lon)) return false;
  out->hash = h;
  const uint8_t step = h.step;
  const uint32_t ilat = Gather(h.bits);
  const uint32_t ilon = Gather(h.bits >> 1);
  const double lat_scale = lat.max - lat.min;
  const double lon_scale = lon.max - lon.min;
  const double div = static_cast<double>(1ull << step);
  out->lat.min = lat.min + (ilat * 1.0 / div) * lat_scale;
  out->lat.max = lat.min + ((ilat + 1) * 1.0 / div) * lat_scale;
  out->lon.min = lon.min + (ilon * 1.0 / div) * lon_scale;
  out->lon.max = lon.min + ((ilon + 1) * 1.0 / div) * lon_scale;
  return true;
}

bool DecodeScore(double score, double* xy) {
  const Hash h{ScoreBits(score), kStepMax};
  Area area;
  if (!Decode(kLonRange, kLatRange, h, &area)) return false;
  xy[0] = (area.lon.min + area.lon.max) / 2;
  if (xy[0] > kLonMax) xy[0] = kLonMax;
  if (xy[0] < kLonMin) xy[0] = kLonMin;
  xy[1] = (area.lat.min + area.lat.max) / 2;
  if (xy[1] > kLatMax) xy[1] = kLatMax;
  if (xy[1] < kLatMin) xy[1] = kLatMin;
  return true;
}

uint64_t Align52Bits(const Hash& h) { return h.bits << (52 - h.step * 2); }

void ScoresOfBox(Hash h, uint64_t* min, uint64_t* max) {
  *min = Align52Bits(h);
  ++h.bits;
  *max = Align52Bits(h);
}

void GetNeighbors(const Hash& h, Neighbors* n) {
  n->east = Moved(h, 1, 0);
  n->west = Moved(h, -1, 0);
  n->south = Moved(h, 0, -1);
  n->north = Moved(h, 0, 1);
  n->north_west = Moved(h, -1, 1);
  n->north_east = Moved(h, 1, 1);
  n->south_east = Moved(h, 1, -1);
  n->south_west = Moved(h, -1, -1);
}

uint8_t EstimateStepsByRadius(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;                    // so the range is covered in most cases
  if (lat > 66 || lat < -66) {  // boxes are narrower towards the poles
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return static_cast<uint8_t>(step);
}

void BoundingBox(Shape* s) {
  const double height = s->conversion * (s->type == Shape::kCircle ? s->radius : s->height / 2);
  const double width = s->conversion * (s->type == Shape::kCircle ? s->radius : s->width / 2);
  const double lat_delta = RadDeg(height / kEarthRadius);
  const double lon_delta_top = RadDeg(width / kEarthRadius / std::cos(DegRad(s->lat + lat_delta)));
  const double lon_delta_bottom =
      RadDeg(width / kEarthRadius / std::cos(DegRad(s->lat - lat_delta)));
  // The box is wider on the side nearer the equator.
  const bool southern = s->lat < 0;
  s->bounds[0] = southern ? s->lon - lon_delta_bottom : s->lon - lon_delta_top;
  s->bounds[2] = southern ? s->lon + lon_delta_bottom : s->lon + lon_delta_top;
  s->bounds[1] = s->lat - lat_delta;
  s->bounds[3] = s->lat + lat_delta;
}

Cover CoverShape(Shape* s) {
  BoundingBox(s);
  const double min_lon = s->bounds[0], min_lat = s->bounds[1];
  const double max_lon = s->bounds[2], max_lat = s->bounds[3];
  double radius_meters =
      s->type == Shape::kCircle
          ? s->radius
          : std::sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
  radius_meters *= s->conversion;
  int steps = EstimateStepsByRadius(radius_meters, s->lat);
  Cover c;
  Encode(kLonRange, kLatRange, s->lon, s->lat, static_cast<uint8_t>(steps), &c.hash);
  GetNeighbors(c.hash, &c.neighbors);
  Decode(kLonRange, kLatRange, c.hash, &c.area);
  // A step too coarse near the shape's edges would leave part of it uncovered: one less.
  bool decrease = false;
  {
    Area north{}, south{}, east{}, west{};
    Decode(kLonRange, kLatRange, c.neighbors.north, &north);
    Decode(kLonRange, kLatRange, c.neighbors.south, &south);
    Decode(kLonRange, kLatRange, c.neighbors.east, &east);
    Decode(kLonRange, kLatRange, c.neighbors.west, &west);
    if (north.lat.max < max_lat) decrease = true;
    if (south.lat.min > min_lat) decrease = true;
    if (east.lon.max < max_lon) decrease = true;
    if (west.lon.min > min_lon) decrease = true;
  }
  if (steps > 1 && decrease) {
    steps--;
    Encode(kLonRange, kLatRange, s->lon, s->lat, static_cast<uint8_t>(steps), &c.hash);
    GetNeighbors(c.hash, &c.neighbors);
    Decode(kLonRange, kLatRange, c.hash, &c.area);
  }
  // Drop the neighbours the shape does not reach.
  if (steps >= 2) {
    Neighbors& n = c.neighbors;
    if (c.area.lat.min < min_lat) n.south = n.south_west = n.south_east = Hash{};
    if (c.area.lat.max > max_lat) n.north = n.north_east = n.north_west = Hash{};
    if (c.area.lon.min < min_lon) n.west = n.south_west = n.north_west = Hash{};
    if (c.area.lon.max > max_lon) n.east = n.south_east = n.north_east = Hash{};
  }
  return c;
}

double Distance(double lon1d, double lat1d, double lon2d, double lat2d) {
  const double lon1r = DegRad(lon1d);
  const double lon2r = DegRad(lon2d);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Same longitude: the arc along the meridian, without the costly part.
  if (v == 0.0) return LatDistance(lat1d, lat2d);
  const double lat1r = DegRad(lat1d);
  const double lat2r = DegRad(lat2d);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadius * std::asin(std::sqrt(a));
}

bool WithinShape(const Shape& s, double score, double* xy, double* dist) {
  if (!DecodeScore(score, xy)) return false;
  if (s.type == Shape::kCircle) {
    *dist = Distance(s.lon, s.lat, xy[0], xy[1]);
    return *dist <= s.radius * s.conversion;
  }
  const double width_m = s.width * s.conversion, height_m = s.height * s.conversion;
  // The latitude distance is the cheaper one: test it first.
  if (LatDistance(xy[1], s.lat) > height_m / 2) return false;
  if (Distance(xy[0], xy[1], s.lon, xy[1]) > width_m / 2) return false;
  *dist = Distance(s.lon, s.lat, xy[0], xy[1]);
  return true;
}

void GeohashString(double score, char out[11]) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double xy[2];
  DecodeScore(score, xy);
  // Redis encodes with latitudes in [-90, 90] here, the standard geohash.
  Hash h;
  Encode(Range{-180, 180}, Range{-90, 90}, xy[0], xy[1], 26, &h);
  for (int i = 0; i < 11; ++i) {
    // 52 bits make 10 characters and 2 bits; the 11th is "0", as Redis writes it.
    const uint64_t idx = i == 10 ? 0 : (h.bits >> (52 - (i + 1) * 5)) & 0x1f;
    out[i] = kAlphabet[idx];
  }
}

}  // namespace vessel::zsets::geo
