#include "../src/rd.h"
