// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe2: MRs over a dma-buf (ibv_reg_dmabuf_mr).
 *
 * A NIC attaches to the dma-buf and DMAs to the addresses the exporter
 * maps for it.  A software device moves data with the CPU, so rxe2
 * asks the exporter for a kernel mapping instead (dma_buf_vmap()) and
 * builds the MR's page array from it: the data path then reaches a
 * dma-buf MR's pages as a pinned MR's.  The MR holds a reference on the
 * dma-buf and the mapping until dereg, so the process may close its fd
 * and the exporter's other users may go at any time; the pages stay
 * until dereg.  That is pinning: neither Debian kernel has
 * CONFIG_DMABUF_MOVE_NOTIFY.  It relies on the exporter keeping its
 * pages where its kernel mapping points for as long as the mapping
 * lives, as udmabuf and the system dma-heap do (their pages never
 * move); an exporter that migrates buffers (a GPU's) would need an
 * attachment pinned with dma_buf_pin(), which a device without a
 * struct device for DMA cannot make.  A mapping of I/O memory (a BAR)
 * or of anything that is not RAM with page structs is refused
 * (EOPNOTSUPP): memcpy() through struct pages is not for it.
 */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

#include "rxe2_verbs.h"

RXE2_IMPORT_NS_DMA_BUF;

static int rxe2_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
#ifdef RXE2_HAVE_DMA_BUF_VMAP_UNLOCKED
	return dma_buf_vmap_unlocked(dmabuf, map);
#else
	return dma_buf_vmap(dmabuf, map);
#endif
}

static void rxe2_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
#ifdef RXE2_HAVE_DMA_BUF_VMAP_UNLOCKED
	dma_buf_vunmap_unlocked(dmabuf, map);
#else
	dma_buf_vunmap(dmabuf, map);
#endif
}

struct ib_mr *rxe2_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 iova, int fd, int access,
				      RXE2_DMAH_PARAM RXE2_DMABUF_UDATA_PARAM)
{
	struct rxe2_dev *rdev = to_rdev(ibpd->device);
	struct dma_buf *dmabuf;
	struct rxe2_mr *mr;
	int ret;

	/* a DMA handle is a placement hint (rxe2_alloc_dmah()): nothing to do */
	ret = rxe2_mr_check_access_held(access);
	if (ret)
		return ERR_PTR(ret);
	if (!length || length > rdev->attr.max_mr_size ||
	    iova + length < iova || offset + length < offset)
		return ERR_PTR(-EINVAL);
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	ret = -EINVAL;
	if (offset + length > dmabuf->size)
		goto err_put;
	mr = rxe2_mr_alloc(ibpd, access, true);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto err_put;
	}
	mr->type = RXE2_MR_DMABUF;
	ret = rxe2_dmabuf_vmap(dmabuf, &mr->dmabuf_map);
	if (ret)
		goto err_mr;
	ret = -EOPNOTSUPP;
	if (mr->dmabuf_map.is_iomem)
		goto err_vunmap;
	ret = rxe2_mr_kva_pages(mr, mr->dmabuf_map.vaddr, offset, length);
	if (ret)
		goto err_vunmap;
	mr->dmabuf = dmabuf;
	rxe2_mr_publish(mr, iova, length);
	return &mr->ibmr;

err_vunmap:
	rxe2_dmabuf_vunmap(dmabuf, &mr->dmabuf_map);
err_mr:
	kvfree(mr->pages);
	rxe2_mr_free(rdev, mr);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* dereg, after the last access: the mapping and the reference go */
void rxe2_dmabuf_release(struct rxe2_mr *mr)
{
	rxe2_dmabuf_vunmap(mr->dmabuf, &mr->dmabuf_map);
	dma_buf_put(mr->dmabuf);
	mr->dmabuf = NULL;
}
