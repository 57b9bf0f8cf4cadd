// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_arithmetic: timeouts and reject reasons
 *
 * cm_kunit_stock_rej.h, which tools/testing/kunit/run.sh writes from the
 * stock cm.c (stock_rej.py), has the stock CM's reject texts.
 */

#include <kunit/test.h>
#include "cm_kunit_stock_rej.h"

struct cm_kunit_ms_case {
	unsigned int t;
	int ms;
};

static const struct cm_kunit_ms_case cm_kunit_ms_cases[] = {
	{ .t = 0, .ms = 1 }, { .t = 1, .ms = 1 }, { .t = 7, .ms = 1 },
	{ .t = 8, .ms = 1 }, { .t = 9, .ms = 2 }, { .t = 10, .ms = 4 },
	{ .t = 14, .ms = 64 }, { .t = 16, .ms = 256 }, { .t = 20, .ms = 4096 },
	{ .t = 24, .ms = 65536 }, { .t = 30, .ms = 1 << 22 },
	{ .t = 31, .ms = 1 << 23 },
};

static void cm_kunit_ms_desc(const struct cm_kunit_ms_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "t=%u is %d ms", c->t, c->ms);
}

KUNIT_ARRAY_PARAM(cm_kunit_ms, cm_kunit_ms_cases, cm_kunit_ms_desc);

static void iba_time_is_two_to_the_t_minus_8_ms(struct kunit *test)
{
	const struct cm_kunit_ms_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, cm_iba_to_ms(c->t), c->ms);
}

struct cm_kunit_ack_case {
	u8 ca_ack_delay;
	u8 packet_life_time;
	u8 timeout;
};

/*
 * 2^(plt + 1) + 2^delay, as a power of two: one more than the larger
 * exponent when the two are within one of each other, else the larger;
 * never beyond 31.
 */
static const struct cm_kunit_ack_case cm_kunit_ack_cases[] = {
	/* 2^1 + 2^0: exponents adjacent */
	{ .ca_ack_delay = 0, .packet_life_time = 0, .timeout = 2 },
	/* 2^1 + 2^1 = 2^2 */
	{ .ca_ack_delay = 1, .packet_life_time = 0, .timeout = 2 },
	/* 2^2 + 2^3 */
	{ .ca_ack_delay = 3, .packet_life_time = 1, .timeout = 4 },
	/* the round trip dominates */
	{ .ca_ack_delay = 10, .packet_life_time = 14, .timeout = 15 },
	{ .ca_ack_delay = 14, .packet_life_time = 14, .timeout = 16 },
	/* equal exponents double */
	{ .ca_ack_delay = 15, .packet_life_time = 14, .timeout = 16 },
	{ .ca_ack_delay = 16, .packet_life_time = 14, .timeout = 17 },
	/* the ACK delay dominates */
	{ .ca_ack_delay = 17, .packet_life_time = 14, .timeout = 17 },
	{ .ca_ack_delay = 20, .packet_life_time = 5, .timeout = 20 },
	{ .ca_ack_delay = 16, .packet_life_time = 0, .timeout = 16 },
	{ .ca_ack_delay = 0, .packet_life_time = 30, .timeout = 31 },
	{ .ca_ack_delay = 31, .packet_life_time = 0, .timeout = 31 },
	/* capped at the 5-bit maximum */
	{ .ca_ack_delay = 31, .packet_life_time = 31, .timeout = 31 },
	{ .ca_ack_delay = 30, .packet_life_time = 30, .timeout = 31 },
};

static void cm_kunit_ack_desc(const struct cm_kunit_ack_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "ack delay %u, lifetime %u -> %u",
		 c->ca_ack_delay, c->packet_life_time, c->timeout);
}

KUNIT_ARRAY_PARAM(cm_kunit_ack, cm_kunit_ack_cases, cm_kunit_ack_desc);

static void ack_timeout_covers_round_trip_and_ack_delay(struct kunit *test)
{
	const struct cm_kunit_ack_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, cm_ack_timeout(c->ca_ack_delay,
					     c->packet_life_time), c->timeout);
}

/* Over the whole 5-bit domain: at least each term, at most 31. */
static void ack_timeout_bounds_hold_everywhere(struct kunit *test)
{
	unsigned int d, p;

	for (d = 0; d < 32; d++) {
		for (p = 0; p < 32; p++) {
			u8 t = cm_ack_timeout(d, p);

			KUNIT_EXPECT_LE(test, t, 31);
			KUNIT_EXPECT_GE(test, t, min(d, 31U));
			KUNIT_EXPECT_GE(test, t, min(p + 1, 31U));
		}
	}
}

struct cm_kunit_rej_case {
	int reason;
	const char *text;	/* NULL: any text but "unrecognized reason" */
};

/*
 * ibcm_reject_msg() says exactly what the stock CM says: consumers print
 * its texts and scripts grep logs for them.  The KUnit harness writes the
 * stock texts into cm_kunit_stock_rej.h, read out of the stock cm.c
 * (tools/testing/kunit/stock_rej.py); in a tree without that file only
 * the fallback is checked.
 */
#if __has_include("cm_kunit_stock_rej.h")
#else
#define CM_KUNIT_STOCK_REJ_TEXTS
#define CM_KUNIT_STOCK_REJ_DEFAULT "unrecognized reason"
#endif

static const struct cm_kunit_rej_case cm_kunit_rej_cases[] = {
	CM_KUNIT_STOCK_REJ_TEXTS
	{ .reason = 34, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = 0, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = 36, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = -1, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = 1000, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = INT_MIN, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
	{ .reason = INT_MAX, .text = CM_KUNIT_STOCK_REJ_DEFAULT },
};

/* The stock texts were there to compare with, all 34 of them. */
static void stock_reject_texts_were_compared(struct kunit *test)
{
#ifdef CM_KUNIT_HAVE_STOCK_REJ
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(cm_kunit_rej_cases), 34 + 7);
#else
	kunit_skip(test, "no cm_kunit_stock_rej.h (the project's KUnit harness writes it)");
#endif
}

static void cm_kunit_rej_desc(const struct cm_kunit_rej_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "reason %d", c->reason);
}

KUNIT_ARRAY_PARAM(cm_kunit_rej, cm_kunit_rej_cases, cm_kunit_rej_desc);

static void reject_reason_has_its_text(struct kunit *test)
{
	const struct cm_kunit_rej_case *c = test->param_value;

	KUNIT_EXPECT_STREQ(test, ibcm_reject_msg(c->reason), c->text);
}

/* Every defined reason, 1..35 except 34, has a text of its own. */
static void every_known_reason_has_distinct_text(struct kunit *test)
{
	const char *seen[36] = {};
	int r, q;

	for (r = 1; r <= 35; r++) {
		if (r == 34)
			continue;
		seen[r] = ibcm_reject_msg(r);
		KUNIT_EXPECT_NOT_NULL(test, seen[r]);
		KUNIT_EXPECT_STRNEQ_MSG(test, seen[r], "unrecognized reason",
					"reason %d", r);
		for (q = 1; q < r; q++)
			if (seen[q])
				KUNIT_EXPECT_STRNEQ(test, seen[q], seen[r]);
	}
}

static struct kunit_case cm_kunit_arith_cases[] = {
	KUNIT_CASE_PARAM(iba_time_is_two_to_the_t_minus_8_ms,
			 cm_kunit_ms_gen_params),
	KUNIT_CASE_PARAM(ack_timeout_covers_round_trip_and_ack_delay,
			 cm_kunit_ack_gen_params),
	KUNIT_CASE(ack_timeout_bounds_hold_everywhere),
	KUNIT_CASE_PARAM(reject_reason_has_its_text, cm_kunit_rej_gen_params),
	KUNIT_CASE(every_known_reason_has_distinct_text),
	KUNIT_CASE(stock_reject_texts_were_compared),
	{}
};

static struct kunit_suite cm_kunit_arith_suite = {
	.name = "ib_cm_arithmetic",
	.test_cases = cm_kunit_arith_cases,
};

kunit_test_suite(cm_kunit_arith_suite);
