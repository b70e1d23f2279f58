const label = "</script> is written safely";
document.getElementById("chart").textContent = label;
