// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's uverbs API (driver_def): the device object's mlx5 method QUERY_PORT and
 * attribute of QUERY_CONTEXT, the PD object's PD_QUERY (below), and
 * UAR objects of the InfiniBand shim: the driver's uverbs object MLX5_IB_OBJECT_UAR,
 * which libmlx5 uses for the UAR pages of a context with dynamic UARs
 * (MLX5_LIB_CAP_DYN_UAR): its CQs and QPs ring doorbells on pages it allocates here.
 *
 * UAR_OBJ_ALLOC takes an allocation type (blue flame or non-cached); Rust checks it,
 * runs ALLOC_UAR and answers the UAR index, its page in BAR 0 and the caching. The
 * page becomes an rdma_user_mmap_entry of the context, keyed in the range upstream
 * uses, so the MMAP_OFFSET answered decodes in mlx5rs_ib_mmap() as upstream's does.
 * Destroying the object removes the entry; when its last mapping is gone too, the
 * core calls mmap_free, which deallocates the UAR. Disassociation zaps the mappings
 * before the context goes, so mmap_free always runs while the context lives.
 */
#include <linux/build_bug.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME mlx5rs_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include "ib_priv.h"

static const void *uctx_rust(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct mlx5rs_ib_ucontext, ibuc)->rust;
}

static int mlx5rs_ib_uar_obj_cleanup(struct ib_uobject *uobject, enum rdma_remove_reason why,
				     struct uverbs_attr_bundle *attrs)
{
	struct mlx5rs_ib_uar_entry *e = uobject->object;

	rdma_user_mmap_entry_remove(&e->rdma);
	return 0;
}

static int UVERBS_HANDLER(MLX5_IB_METHOD_UAR_OBJ_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_uobject *uobj =
		uverbs_attr_get_uobject(attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE);
	enum mlx5_ib_uapi_uar_alloc_type alloc_type;
	struct mlx5rs_ib_uar_entry *e;
	struct ib_ucontext *ibuc;
	const void *rust;
	u64 first, last, offset;
	u32 length;
	int err;

	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_uar_obj) != MLX5RS_IB_UAR_OBJ_SIZE);
	ibuc = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(ibuc))
		return PTR_ERR(ibuc);
	rust = to_rsdev(ibuc->device)->rust;
	err = uverbs_get_const(&alloc_type, attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE);
	if (err)
		return err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	err = mlx5rs_ib_rs_uar_obj_alloc(rust, uctx_rust(ibuc), alloc_type, &e->obj);
	if (err) {
		kfree(e);
		return err;
	}
	mlx5rs_ib_rs_uar_obj_keys(&first, &last);
	err = rdma_user_mmap_entry_insert_range(ibuc, &e->rdma, PAGE_SIZE, first, last);
	if (err) {
		mlx5rs_ib_rs_uar_obj_free(rust, uctx_rust(ibuc), e->obj.uar_index);
		kfree(e);
		return err;
	}
	/* From here on the UAR goes with the entry (mmap_free). */
	uobj->object = e;
	uverbs_finalize_uobj_create(attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE);

	offset = mlx5rs_ib_rs_entry_mmap_offset(e->rdma.start_pgoff);
	length = e->rdma.npages * PAGE_SIZE;
	err = uverbs_copy_to(attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, &offset,
			     sizeof(offset));
	if (err)
		return err;
	err = uverbs_copy_to(attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, &e->obj.uar_index,
			     sizeof(e->obj.uar_index));
	if (err)
		return err;
	return uverbs_copy_to(attrs, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, &length,
			      sizeof(length));
}

DECLARE_UVERBS_NAMED_METHOD(
	MLX5_IB_METHOD_UAR_OBJ_ALLOC,
	UVERBS_ATTR_IDR(MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, MLX5_IB_OBJECT_UAR,
			UVERBS_ACCESS_NEW, UA_MANDATORY),
	UVERBS_ATTR_CONST_IN(MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE,
			     enum mlx5_ib_uapi_uar_alloc_type, UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, UVERBS_ATTR_TYPE(u32),
			    UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, UVERBS_ATTR_TYPE(u32),
			    UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, UVERBS_ATTR_TYPE(u64),
			    UA_MANDATORY));

DECLARE_UVERBS_NAMED_METHOD_DESTROY(
	MLX5_IB_METHOD_UAR_OBJ_DESTROY,
	UVERBS_ATTR_IDR(MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, MLX5_IB_OBJECT_UAR,
			UVERBS_ACCESS_DESTROY, UA_MANDATORY));

DECLARE_UVERBS_NAMED_OBJECT(MLX5_IB_OBJECT_UAR,
			    UVERBS_TYPE_ALLOC_IDR(mlx5rs_ib_uar_obj_cleanup),
			    &UVERBS_METHOD(MLX5_IB_METHOD_UAR_OBJ_ALLOC),
			    &UVERBS_METHOD(MLX5_IB_METHOD_UAR_OBJ_DESTROY));

/*
 * MLX5_IB_METHOD_QUERY_PORT (mlx5dv_query_port). Upstream fills the answer only for
 * an e-switch in offloads mode or a multiport (RoCE LAG) device; for any other valid
 * port it is all zeros, and this function is neither (no e-switch, InfiniBand only).
 */
static int UVERBS_HANDLER(MLX5_IB_METHOD_QUERY_PORT)(struct uverbs_attr_bundle *attrs)
{
	struct mlx5_ib_uapi_query_port info = {};
	struct ib_ucontext *uc;
	u32 port_num;

	if (uverbs_copy_from(&port_num, attrs, MLX5_IB_ATTR_QUERY_PORT_PORT_NUM))
		return -EFAULT;
	uc = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uc))
		return PTR_ERR(uc);
	if (!rdma_is_port_valid(uc->device, port_num))
		return -EINVAL;
	return uverbs_copy_to_struct_or_zero(attrs, MLX5_IB_ATTR_QUERY_PORT, &info, sizeof(info));
}

DECLARE_UVERBS_NAMED_METHOD(
	MLX5_IB_METHOD_QUERY_PORT,
	UVERBS_ATTR_PTR_IN(MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, UVERBS_ATTR_TYPE(u32), UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_QUERY_PORT,
			    UVERBS_ATTR_STRUCT(struct mlx5_ib_uapi_query_port, reg_c0),
			    UA_MANDATORY));

/*
 * MLX5_IB_METHOD_PD_QUERY (libmlx5's ibv_import_pd): the PD's number, as upstream
 * (std_types.c).
 */
static int UVERBS_HANDLER(MLX5_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs, MLX5_IB_ATTR_QUERY_PD_HANDLE);
	struct mlx5rs_ib_pd *pd = container_of(ibpd, struct mlx5rs_ib_pd, ibpd);

	return uverbs_copy_to(attrs, MLX5_IB_ATTR_QUERY_PD_RESP_PDN, &pd->pdn, sizeof(pd->pdn));
}

DECLARE_UVERBS_NAMED_METHOD(
	MLX5_IB_METHOD_PD_QUERY,
	UVERBS_ATTR_IDR(MLX5_IB_ATTR_QUERY_PD_HANDLE, UVERBS_OBJECT_PD, UVERBS_ACCESS_READ,
			UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_QUERY_PD_RESP_PDN, UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(mlx5rs_ib_pd, UVERBS_OBJECT_PD, &UVERBS_METHOD(MLX5_IB_METHOD_PD_QUERY));

/*
 * The driver's attribute of the core's UVERBS_METHOD_QUERY_CONTEXT (its handler calls
 * query_ucontext, ffi/rdma/ib_uctx.c): the alloc_ucontext response, as upstream
 * declares it (ADD_UVERBS_ATTRIBUTES_SIMPLE spelled out, to share the device object's
 * method list with QUERY_PORT).
 */
static const struct uverbs_attr_def *const UVERBS_METHOD_ATTRS(UVERBS_METHOD_QUERY_CONTEXT)[] = {
	UVERBS_ATTR_PTR_OUT(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
			    UVERBS_ATTR_STRUCT(struct mlx5_ib_alloc_ucontext_resp, dump_fill_mkey),
			    UA_MANDATORY),
};

static const struct uverbs_method_def UVERBS_METHOD(UVERBS_METHOD_QUERY_CONTEXT) = {
	.id = UVERBS_METHOD_QUERY_CONTEXT,
	.num_attrs = ARRAY_SIZE(UVERBS_METHOD_ATTRS(UVERBS_METHOD_QUERY_CONTEXT)),
	.attrs = &UVERBS_METHOD_ATTRS(UVERBS_METHOD_QUERY_CONTEXT),
};

ADD_UVERBS_METHODS(mlx5rs_ib_device,
		   UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(UVERBS_METHOD_QUERY_CONTEXT),
		   &UVERBS_METHOD(MLX5_IB_METHOD_QUERY_PORT));

/* The driver's objects and attributes, merged into the uverbs API at registration (driver_def). */
const struct uapi_definition mlx5rs_ib_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(MLX5_IB_OBJECT_UAR),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &mlx5rs_ib_device),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &mlx5rs_ib_pd),
	{},
};

/* The last reference to a UAR object's entry is gone: deallocate its UAR. */
static void mlx5rs_ib_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct mlx5rs_ib_uar_entry *e = container_of(entry, struct mlx5rs_ib_uar_entry, rdma);

	mlx5rs_ib_rs_uar_obj_free(to_rsdev(entry->ucontext->device)->rust,
				  uctx_rust(entry->ucontext), e->obj.uar_index);
	kfree(e);
}

const struct ib_device_ops mlx5rs_ib_uar_ops = {
	.mmap_free = mlx5rs_ib_mmap_free,
};
