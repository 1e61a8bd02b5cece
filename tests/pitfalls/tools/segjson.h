/* segjson.h -- JSON dump of a segment snapshot for the pitfall tests. */
#ifndef MTP_SEGJSON_H
#define MTP_SEGJSON_H

#include "segmap.h"

#include <stdio.h>

void mtp_put_json(FILE *f, const mtp_seg *seg, const mtp_snap *s);

#endif
