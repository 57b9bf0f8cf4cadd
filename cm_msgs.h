/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wire format of the InfiniBand Communication Management messages
 * (IBTA Vol 1, chapter 12, class version 2).
 *
 * The kernel describes every field of every CM message in
 * <rdma/ibta_vol1_c12.h>, one message type per struct (struct cm_req_msg,
 * struct cm_rep_msg ...), and reads and writes them with the accessors of
 * <rdma/iba.h>: IBA_GET() and IBA_SET() for numbers, IBA_GET_MEM_PTR() for
 * GIDs and data blocks.  Each field is tied to its message's struct, so
 * reading a REP field from a REQ does not compile.  This file adds only
 * what those headers leave to the CM itself: the class version and the
 * values some fields take.  Byte fields are written with IBA_SET_MEM(),
 * which copies no more than the caller asks for: every API call has
 * checked its lengths against the sizes of <rdma/ib_cm.h> by then.
 */
#ifndef IB_CM_MSGS_H
#define IB_CM_MSGS_H

#include <linux/build_bug.h>
#include <rdma/ib_mad.h>
#include <rdma/ibta_vol1_c12.h>

/* The CM class version this module speaks. */
#define CM_CLASS_VERSION	2

/* Values of the REQ transport service type fields. */
#define CM_REQ_TRANSPORT_RC		0
#define CM_REQ_TRANSPORT_UC		1
#define CM_REQ_TRANSPORT_EXTENDED	3
#define CM_REQ_EXT_TRANSPORT_XRC	1

/* Which message an MRA or REJ refers to (Message MRAed / Rejected). */
#define CM_MSG_RESPONSE_REQ		0
#define CM_MSG_RESPONSE_REP		1
#define CM_MSG_RESPONSE_OTHER		2

/* Every CM message fills a whole MAD. */
static_assert(sizeof(struct cm_req_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_mra_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_rej_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_rep_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_rtu_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_dreq_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_drep_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_sidr_req_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_sidr_rep_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_lap_msg) == IB_MGMT_MAD_SIZE);
static_assert(sizeof(struct cm_apr_msg) == IB_MGMT_MAD_SIZE);

#endif /* IB_CM_MSGS_H */
