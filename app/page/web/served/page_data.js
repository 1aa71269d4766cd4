/*
 * A served component's page data (app/served/page_data.py): what is the same for every student
 * (the figures' Bokeh items, the lesson's markup and config), fetched once from its address
 * (`model.shared`), which names its content, so the browser keeps it for good; or carried
 * inline (`model.inline`) where the address is not served. A page that cannot fetch it asks
 * the session for it inline.
 */

/** Each address's data, fetched once per page however many components ask. */
const fetched = new Map();

function fetchOnce(address) {
  const url = new URL(address, window.location.href).href;
  if (!fetched.has(url)) {
    const loading = fetch(url, { credentials: "same-origin" }).then((response) => {
      if (!response.ok) throw new Error(`sdpa-sim: page data ${response.status}`);
      return response.json();
    });
    // A failed fetch is not kept: another component may try again.
    loading.catch(() => fetched.delete(url));
    fetched.set(url, loading);
  }
  return fetched.get(url);
}

/** The data inline, once the session has set it. */
function inline(model) {
  if (Object.keys(model.inline).length > 0) return Promise.resolve(model.inline);
  return new Promise((resolve) => {
    // Heard once: Panel's model may offer no way to stop listening.
    let heard = false;
    model.on("inline", () => {
      if (heard || Object.keys(model.inline).length === 0) return;
      heard = true;
      resolve(model.inline);
    });
  });
}

/** The component's page data: fetched from its address, else inline (asked for if need be). */
export function pageData(model) {
  if (!model.shared) return inline(model);
  return fetchOnce(model.shared).catch(() => {
    model.send_msg({ page_data: "inline" });
    return inline(model);
  });
}
