/*
 * The class's answers as small bar charts (class mode, app/served/components/class_bar.py):
 * per question each choice's label, bar and count, and which choice is right. Imported by
 * class_bar_component.js (the bar's disclosure) and lesson_component.js (beside each
 * question of the quiz once the presenter shows the counts to the class).
 */

/** One of the texts' words, with `{count}` filled (or each `{name}` of an object's). */
export function say(texts, key, count) {
  const values = typeof count === "object" ? count : { count };
  return texts[key].replace(/\{(\w+)\}/g, (whole, name) =>
    name in values ? String(values[name]) : whole,
  );
}

/**
 * The chart of question `key` (`question`: its title, choices' labels and right choice's
 * key) with `counts` ({choice: count}); `counted` false draws only its title and how many
 * answered (the counts and the right choice hidden).
 */
export function answerChart(texts, key, question, counts, counted = true) {
  const values = Object.keys(question.choices).map((choice) => counts[choice] ?? 0);
  const most = Math.max(1, ...values);
  const total = values.reduce((sum, value) => sum + value, 0);
  const chart = document.createElement("figure");
  chart.className = "sdpa-class-question";
  chart.dataset.question = key;
  const caption = document.createElement("figcaption");
  caption.textContent = `${question.title} (${say(texts, "answered", total)})`;
  chart.append(caption);
  if (!counted) return chart;
  const list = document.createElement("ul");
  Object.entries(question.choices).forEach(([choice, label], index) => {
    const item = document.createElement("li");
    item.className = "sdpa-class-choice";
    item.dataset.choice = choice;
    const name = document.createElement("span");
    name.textContent = label;
    if (choice === question.right) {
      name.className = "sdpa-class-right";
      name.textContent = `${label} (${texts.right})`;
    }
    const track = document.createElement("span");
    track.className = "sdpa-class-track";
    track.setAttribute("aria-hidden", "true");
    const fill = document.createElement("span");
    fill.className = "sdpa-class-fill";
    fill.style.width = `${(100 * values[index]) / most}%`;
    track.append(fill);
    const count = document.createElement("span");
    count.className = "sdpa-class-count";
    count.textContent = String(values[index]);
    item.append(name, track, count);
    list.append(item);
  });
  chart.append(list);
  return chart;
}
